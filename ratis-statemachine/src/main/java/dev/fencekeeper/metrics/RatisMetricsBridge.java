package dev.fencekeeper.metrics;

import com.codahale.metrics.Metric;
import com.codahale.metrics.MetricRegistry;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.impl.RatisMetricRegistryImpl;
import org.apache.ratis.thirdparty.com.codahale.metrics.MetricRegistryListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mirrors Ratis's own metrics into each node's Dropwizard registry (docs/design.md, Ratis facts).
 *
 * <p>{@code ratis-metrics-default} keeps its metrics in shaded Dropwizard registries that are not
 * type-compatible with ours, one per (component, member) and all in one JVM-wide {@link
 * MetricRegistries#global()}. This bridge registers one reporter hook there, once per JVM and
 * before the first RaftServer is built, and routes each Ratis registry to the node it belongs to: a
 * registry's prefix is the peer id ({@code n1}) or the group member id ({@code n1@group-…}), so
 * several nodes in one JVM (as in tests) never see each other's metrics. Registries of Ratis
 * clients ({@code client-…->n1}) belong to no node and are left alone.
 *
 * <p>Each shaded metric appears in the node's registry as a live read-only view ({@link
 * ShadedMetrics}) named {@code <application>.<component>.<metric>}, e.g. {@code
 * ratis.state_machine.appliedIndex}: the member prefix is dropped because the registry already
 * belongs to one node of one group. Should that ever collide (a node in two groups), the full Ratis
 * name is used instead. Two names that Prometheus would render identically are never both exported
 * (the second is skipped and logged at debug), since a duplicate family would fail the whole
 * scrape.
 */
final class RatisMetricsBridge {
  private static final Logger LOG = LoggerFactory.getLogger(RatisMetricsBridge.class);
  private static final Map<String, NodeMirror> NODES = new ConcurrentHashMap<>();
  private static final Consumer<RatisMetricRegistry> ON_CREATED = RatisMetricsBridge::created;
  private static final Consumer<RatisMetricRegistry> ON_REMOVED = RatisMetricsBridge::removed;
  private static boolean installed;

  private RatisMetricsBridge() {}

  /**
   * Starts mirroring the Ratis metrics of peer {@code peerId} into {@code target}: those that exist
   * now and those Ratis creates later. Call before building that peer's RaftServer. Closing the
   * handle stops the mirror and removes what it added.
   */
  static AutoCloseable attach(String peerId, MetricRegistry target) {
    install();
    NodeMirror mirror = new NodeMirror(peerId, target);
    NodeMirror previous = NODES.put(peerId, mirror);
    if (previous != null) {
      LOG.warn(
          "Ratis metrics of {} were still mirrored for an earlier node with that id; moving them",
          peerId);
      previous.close();
    }
    for (RatisMetricRegistry r : MetricRegistries.global().getMetricRegistries()) {
      if (peerId.equals(owner(r.getMetricRegistryInfo()))) {
        mirror.add(r);
      }
    }
    return () -> {
      NODES.remove(peerId, mirror);
      mirror.close();
    };
  }

  private static synchronized void install() {
    if (!installed) {
      MetricRegistries.global().addReporterRegistration(ON_CREATED, ON_REMOVED);
      installed = true;
    }
  }

  /** The peer a Ratis registry belongs to: its prefix up to the {@code @} of a group member id. */
  static String owner(MetricRegistryInfo info) {
    String prefix = info.getPrefix();
    int at = prefix.indexOf('@');
    return at < 0 ? prefix : prefix.substring(0, at);
  }

  private static void created(RatisMetricRegistry registry) {
    NodeMirror mirror = NODES.get(owner(registry.getMetricRegistryInfo()));
    if (mirror != null) {
      mirror.add(registry);
    }
  }

  private static void removed(RatisMetricRegistry registry) {
    NodeMirror mirror = NODES.get(owner(registry.getMetricRegistryInfo()));
    if (mirror != null) {
      mirror.remove(registry);
    }
  }

  /**
   * {@code name} in snake case: two Ratis metrics whose names differ only in case or punctuation
   * would meet in one Prometheus series, so only the first is mirrored.
   */
  static String prometheusName(String name) {
    return RatisNames.snake(name);
  }

  /** Everything mirrored for one node. */
  private static final class NodeMirror {
    private final String peerId;
    private final MetricRegistry target;
    private final Map<
            org.apache.ratis.thirdparty.com.codahale.metrics.MetricRegistry, RegistryMirror>
        mirrors = new ConcurrentHashMap<>();
    private final Set<String> claimedNames = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    NodeMirror(String peerId, MetricRegistry target) {
      this.peerId = peerId;
      this.target = target;
    }

    void add(RatisMetricRegistry registry) {
      if (closed) {
        return;
      }
      if (!(registry instanceof RatisMetricRegistryImpl impl)) {
        LOG.debug(
            "{}: cannot mirror Ratis registry of type {}", peerId, registry.getClass().getName());
        return;
      }
      org.apache.ratis.thirdparty.com.codahale.metrics.MetricRegistry shaded =
          impl.getDropWizardMetricRegistry();
      RegistryMirror m = new RegistryMirror(this, impl.getMetricRegistryInfo());
      if (mirrors.putIfAbsent(shaded, m) == null) {
        shaded.addListener(
            m); // replays the metrics already there, then follows additions and removals
      }
    }

    void remove(RatisMetricRegistry registry) {
      if (registry instanceof RatisMetricRegistryImpl impl) {
        org.apache.ratis.thirdparty.com.codahale.metrics.MetricRegistry shaded =
            impl.getDropWizardMetricRegistry();
        RegistryMirror m = mirrors.remove(shaded);
        if (m != null) {
          shaded.removeListener(m);
          m.unmirrorAll();
        }
      }
    }

    void close() {
      closed = true;
      for (Map.Entry<
              org.apache.ratis.thirdparty.com.codahale.metrics.MetricRegistry, RegistryMirror>
          e : mirrors.entrySet()) {
        e.getKey().removeListener(e.getValue());
        e.getValue().unmirrorAll();
      }
      mirrors.clear();
    }

    /**
     * Registers {@code view} under the first free candidate name; returns the name used, or null.
     */
    String register(Set<String> candidates, Metric view) {
      for (String name : candidates) {
        String exported = prometheusName(name);
        if (!claimedNames.add(exported)) {
          continue;
        }
        try {
          target.register(name, view);
          return name;
        } catch (IllegalArgumentException taken) {
          claimedNames.remove(exported);
        }
      }
      return null;
    }

    void unregister(String name) {
      target.remove(name);
      claimedNames.remove(prometheusName(name));
    }
  }

  /** Follows one shaded Ratis registry. */
  private static final class RegistryMirror extends MetricRegistryListener.Base {
    private final NodeMirror node;
    private final String fullPrefix;
    private final String shortPrefix;
    private final Map<String, String> mirrored =
        new ConcurrentHashMap<>(); // Ratis name -> our name

    RegistryMirror(NodeMirror node, MetricRegistryInfo info) {
      this.node = node;
      this.fullPrefix =
          org.apache.ratis.thirdparty.com.codahale.metrics.MetricRegistry.name(
                  info.getApplicationName(), info.getMetricsComponentName(), info.getPrefix())
              + ".";
      this.shortPrefix =
          org.apache.ratis.thirdparty.com.codahale.metrics.MetricRegistry.name(
                  info.getApplicationName(), info.getMetricsComponentName())
              + ".";
    }

    private void mirror(
        String ratisName, org.apache.ratis.thirdparty.com.codahale.metrics.Metric metric) {
      Metric view = ShadedMetrics.view(metric);
      if (view == null) {
        return;
      }
      Set<String> candidates = new LinkedHashSet<>();
      if (ratisName.startsWith(fullPrefix)) {
        candidates.add(shortPrefix + ratisName.substring(fullPrefix.length()));
      }
      candidates.add(ratisName);
      String name = node.register(candidates, view);
      if (name == null) {
        LOG.debug("{}: Ratis metric {} not mirrored: its name is taken", node.peerId, ratisName);
      } else {
        mirrored.put(ratisName, name);
      }
    }

    private void unmirror(String ratisName) {
      String name = mirrored.remove(ratisName);
      if (name != null) {
        node.unregister(name);
      }
    }

    void unmirrorAll() {
      for (String ratisName : Set.copyOf(mirrored.keySet())) {
        unmirror(ratisName);
      }
    }

    @Override
    public void onGaugeAdded(
        String name, org.apache.ratis.thirdparty.com.codahale.metrics.Gauge<?> gauge) {
      mirror(name, gauge);
    }

    @Override
    public void onGaugeRemoved(String name) {
      unmirror(name);
    }

    @Override
    public void onCounterAdded(
        String name, org.apache.ratis.thirdparty.com.codahale.metrics.Counter counter) {
      mirror(name, counter);
    }

    @Override
    public void onCounterRemoved(String name) {
      unmirror(name);
    }

    @Override
    public void onHistogramAdded(
        String name, org.apache.ratis.thirdparty.com.codahale.metrics.Histogram h) {
      mirror(name, h);
    }

    @Override
    public void onHistogramRemoved(String name) {
      unmirror(name);
    }

    @Override
    public void onMeterAdded(
        String name, org.apache.ratis.thirdparty.com.codahale.metrics.Meter meter) {
      mirror(name, meter);
    }

    @Override
    public void onMeterRemoved(String name) {
      unmirror(name);
    }

    @Override
    public void onTimerAdded(
        String name, org.apache.ratis.thirdparty.com.codahale.metrics.Timer timer) {
      mirror(name, timer);
    }

    @Override
    public void onTimerRemoved(String name) {
      unmirror(name);
    }
  }
}
