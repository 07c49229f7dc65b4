package dev.fencekeeper.metrics;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.Metric;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Quantile;
import io.prometheus.metrics.model.snapshots.Quantiles;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one exporter: a node's Dropwizard registry as Prometheus families, read at each scrape.
 * fencekeeper's own metrics are rendered as {@link NodeMetric} declares them; Ratis's mirrored
 * metrics by {@link RatisNames}' rule (timers and histograms as summaries, which keep the
 * reservoir's quantiles and the count; Dropwizard keeps no sum). Nothing is copied or sampled
 * between scrapes.
 */
final class PrometheusExport implements MultiCollector {
  private static final Logger LOG = LoggerFactory.getLogger(PrometheusExport.class);
  private static final double[] QUANTILES = {0.5, 0.75, 0.95, 0.98, 0.99, 0.999};

  private final MetricRegistry registry;
  private final NodeSeries series;
  private final Supplier<Set<String>> peers;

  /**
   * @param peers the peer ids of the node's group, which Ratis writes into some metrics' names
   */
  PrometheusExport(MetricRegistry registry, NodeSeries series, Supplier<Set<String>> peers) {
    this.registry = registry;
    this.series = series;
    this.peers = peers;
  }

  @Override
  public MetricSnapshots collect() {
    List<MetricSnapshot> snapshots = new ArrayList<>();
    for (NodeMetric metric : NodeMetric.values()) {
      try {
        MetricSnapshot s = own(metric, series.of(metric));
        if (s != null) {
          snapshots.add(s);
        }
      } catch (RuntimeException e) {
        LOG.debug("{} not exported: {}", metric, e.toString());
      }
    }
    snapshots.addAll(ratis());
    return new MetricSnapshots(snapshots);
  }

  // -----------------------------------------------------------------------------------------------
  // fencekeeper's own

  private static MetricSnapshot own(NodeMetric metric, Map<List<String>, Metric> series) {
    if (series.isEmpty()) {
      return null;
    }
    String name = metric.prometheusName();
    switch (metric.type()) {
      case COUNTER -> {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(strip(name, "_total"));
        series.forEach(
            (values, m) ->
                b.dataPoint(
                    CounterSnapshot.CounterDataPointSnapshot.builder()
                        .labels(labels(metric, values))
                        .value(((Counter) m).getCount())
                        .build()));
        return b.help(metric.help()).build();
      }
      case GAUGE -> {
        GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(metric.help());
        boolean any = false;
        for (Map.Entry<List<String>, Metric> e : series.entrySet()) {
          Object v = ((Gauge<?>) e.getValue()).getValue();
          if (v instanceof Number n) {
            b.dataPoint(
                GaugeSnapshot.GaugeDataPointSnapshot.builder()
                    .labels(labels(metric, e.getKey()))
                    .value(n.doubleValue())
                    .build());
            any = true;
          }
        }
        return any ? b.build() : null;
      }
      case TIMER, HISTOGRAM -> {
        HistogramSnapshot.Builder b = HistogramSnapshot.builder().name(name).help(metric.help());
        series.forEach(
            (values, m) -> {
              BucketedHistogram.Buckets buckets =
                  m instanceof BucketedTimer t ? t.buckets() : ((BucketedHistogram) m).buckets();
              b.dataPoint(
                  HistogramSnapshot.HistogramDataPointSnapshot.builder()
                      .labels(labels(metric, values))
                      .classicHistogramBuckets(
                          ClassicHistogramBuckets.of(buckets.upperBounds(), buckets.counts()))
                      .sum(buckets.sum())
                      .build());
            });
        return b.build();
      }
      case INFO -> {
        InfoSnapshot.Builder b =
            InfoSnapshot.builder().name(strip(name, "_info")).help(metric.help());
        series
            .keySet()
            .forEach(
                values ->
                    b.dataPoint(
                        InfoSnapshot.InfoDataPointSnapshot.builder()
                            .labels(labels(metric, values))
                            .build()));
        return b.build();
      }
      default -> throw new IllegalStateException(metric.type().toString());
    }
  }

  private static Labels labels(NodeMetric metric, List<String> values) {
    return values.isEmpty()
        ? Labels.EMPTY
        : Labels.of(metric.labelNames(), new ArrayList<>(values));
  }

  private static String strip(String name, String suffix) {
    return name.endsWith(suffix) ? name.substring(0, name.length() - suffix.length()) : name;
  }

  // -----------------------------------------------------------------------------------------------
  // Ratis's, by rule

  /** One Ratis family being collected: its kind, help, and data points by peer. */
  private static final class Family {
    final RatisNames.Kind kind;
    final String help;
    final List<Object> points = new ArrayList<>();
    final Set<String> peers = new HashSet<>();

    Family(RatisNames.Kind kind, String help) {
      this.kind = kind;
      this.help = help;
    }
  }

  private List<MetricSnapshot> ratis() {
    Set<String> ids = peers.get();
    Map<String, Family> families = new LinkedHashMap<>();
    for (Map.Entry<String, Metric> e : registry.getMetrics().entrySet()) {
      String name = e.getKey();
      if (!RatisNames.isRatis(name)) {
        continue;
      }
      try {
        RatisNames.Converted c = RatisNames.convert(name, dropwizardType(e.getValue()), ids);
        Family f =
            families.computeIfAbsent(
                c.family(), k -> new Family(c.kind(), "Ratis " + withoutPeer(name, c.peer())));
        String peerKey = c.peer() == null ? "" : c.peer();
        // Two Ratis metrics that meet in one family must agree on its type and differ in their
        // peer; anything else would fail the whole scrape, so the later one is left out.
        if (f.kind != c.kind() || !f.peers.add(peerKey)) {
          LOG.debug("Ratis metric {} not exported: {} is taken", name, c.family());
          continue;
        }
        Object point = ratisPoint(e.getValue(), c);
        if (point == null) {
          f.peers.remove(peerKey);
        } else {
          f.points.add(point);
        }
      } catch (RuntimeException failed) {
        LOG.debug("Ratis metric {} not exported: {}", name, failed.toString());
      }
    }
    List<MetricSnapshot> snapshots = new ArrayList<>();
    families.forEach(
        (name, f) -> {
          if (!f.points.isEmpty()) {
            snapshots.add(ratisSnapshot(name, f));
          }
        });
    return snapshots;
  }

  /** The Ratis name a family's help shows, with the peer of its first member as a placeholder. */
  private static String withoutPeer(String name, String peer) {
    return peer == null ? name : name.replace(peer, "<peer>");
  }

  private static String dropwizardType(Metric m) {
    if (m instanceof Counter) {
      return "counter";
    } else if (m instanceof Meter) {
      return "meter";
    } else if (m instanceof Timer) {
      return "timer";
    } else if (m instanceof Histogram) {
      return "histogram";
    }
    return "gauge";
  }

  private static Object ratisPoint(Metric metric, RatisNames.Converted c) {
    Labels labels = c.peer() == null ? Labels.EMPTY : Labels.of(RatisNames.PEER_LABEL, c.peer());
    if (metric instanceof Counter counter) {
      return counterPoint(labels, counter.getCount());
    } else if (metric instanceof Meter meter) {
      return counterPoint(labels, meter.getCount());
    } else if (metric instanceof Timer t) {
      return summaryPoint(labels, t.getCount(), t.getSnapshot(), c.divisor());
    } else if (metric instanceof Histogram h) {
      return summaryPoint(labels, h.getCount(), h.getSnapshot(), c.divisor());
    } else if (metric instanceof Gauge<?> g) {
      Object v = g.getValue();
      double d;
      if (v instanceof Number n) {
        d = n.doubleValue();
      } else if (v instanceof Boolean bool) {
        d = bool ? 1 : 0;
      } else {
        return null; // text-valued gauges have no Prometheus form
      }
      return c.kind() == RatisNames.Kind.COUNTER
          ? counterPoint(labels, d)
          : GaugeSnapshot.GaugeDataPointSnapshot.builder()
              .labels(labels)
              .value(d / c.divisor())
              .build();
    }
    return null;
  }

  private static CounterSnapshot.CounterDataPointSnapshot counterPoint(Labels labels, double v) {
    return CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels).value(v).build();
  }

  private static SummarySnapshot.SummaryDataPointSnapshot summaryPoint(
      Labels labels, long count, Snapshot snapshot, double divisor) {
    Quantiles.Builder q = Quantiles.builder();
    for (double quantile : QUANTILES) {
      q.quantile(new Quantile(quantile, snapshot.getValue(quantile) / divisor));
    }
    return SummarySnapshot.SummaryDataPointSnapshot.builder()
        .labels(labels)
        .count(count)
        .quantiles(q.build())
        .build();
  }

  private static MetricSnapshot ratisSnapshot(String name, Family f) {
    switch (f.kind) {
      case COUNTER -> {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(f.help);
        f.points.forEach(p -> b.dataPoint((CounterSnapshot.CounterDataPointSnapshot) p));
        return b.build();
      }
      case SUMMARY -> {
        SummarySnapshot.Builder b = SummarySnapshot.builder().name(name).help(f.help);
        f.points.forEach(p -> b.dataPoint((SummarySnapshot.SummaryDataPointSnapshot) p));
        return b.build();
      }
      default -> {
        GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(f.help);
        f.points.forEach(p -> b.dataPoint((GaugeSnapshot.GaugeDataPointSnapshot) p));
        return b.build();
      }
    }
  }
}
