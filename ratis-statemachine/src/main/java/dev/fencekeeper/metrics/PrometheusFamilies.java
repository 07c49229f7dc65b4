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
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.PrometheusNaming;
import io.prometheus.metrics.model.snapshots.Quantile;
import io.prometheus.metrics.model.snapshots.Quantiles;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Dropwizard registry (the node's JMX registry) as Prometheus families, collected at each
 * scrape.
 *
 * <p>fencekeeper's own counters and gauges are declared here one family at a time, so that several
 * Dropwizard metrics can be one labelled family ({@code fencekeeper.writes.rejected.STALE_TOKEN} is
 * {@code fencekeeper_writes_rejected_total{reason="STALE_TOKEN"}}). Ratis's mirrored metrics
 * ({@code ratis.*}) are converted by rule: names in snake case, counters and meters as counters,
 * numeric gauges as gauges, timers as summaries in seconds, histograms as summaries.
 */
final class PrometheusFamilies implements MultiCollector {
  private static final Logger LOG = LoggerFactory.getLogger(PrometheusFamilies.class);
  private static final Pattern LOWER_UPPER = Pattern.compile("([a-z0-9])([A-Z])");
  private static final Pattern ACRONYM_WORD = Pattern.compile("([A-Z]+)([A-Z][a-z])");
  private static final Pattern NOT_NAME = Pattern.compile("[^A-Za-z0-9_]+");
  private static final Pattern UNDERSCORES = Pattern.compile("_+");
  private static final double NANOS_PER_SECOND = 1e9;
  private static final double[] QUANTILES = {0.5, 0.75, 0.95, 0.98, 0.99, 0.999};

  /**
   * One sample of a declared family: its labels and where its value comes from (null: no sample
   * now).
   */
  record Series(Labels labels, Supplier<Number> value) {}

  /**
   * A declared family: {@code name} without the {@code _total} a counter gets in the text format.
   */
  record Family(String name, String help, boolean counter, List<Series> series) {}

  private final MetricRegistry registry;
  private final List<Family> declared = new ArrayList<>();

  PrometheusFamilies(MetricRegistry registry) {
    this.registry = registry;
  }

  void counter(String name, String help, Counter counter) {
    declared.add(
        new Family(name, help, true, List.of(new Series(Labels.EMPTY, counter::getCount))));
  }

  void counter(String name, String help, List<Series> series) {
    declared.add(new Family(name, help, true, List.copyOf(series)));
  }

  void gauge(String name, String help, Supplier<Number> value) {
    declared.add(new Family(name, help, false, List.of(new Series(Labels.EMPTY, value))));
  }

  @Override
  public MetricSnapshots collect() {
    List<MetricSnapshot> snapshots = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (Family f : declared) {
      MetricSnapshot s = declaredSnapshot(f);
      if (s != null && names.add(s.getMetadata().getPrometheusName())) {
        snapshots.add(s);
      }
    }
    for (Map.Entry<String, Metric> e : registry.getMetrics().entrySet()) {
      if (!e.getKey().startsWith("ratis.")) {
        continue;
      }
      try {
        MetricSnapshot s = ratisSnapshot(e.getKey(), e.getValue());
        // Two Ratis names can meet in snake case; a repeated family would fail the whole scrape.
        if (s != null && names.add(s.getMetadata().getPrometheusName())) {
          snapshots.add(s);
        }
      } catch (RuntimeException failed) {
        LOG.debug("Metric {} not exported: {}", e.getKey(), failed.toString());
      }
    }
    return new MetricSnapshots(snapshots);
  }

  /**
   * The Prometheus name of a Ratis metric: {@code ratis.state_machine.appliedIndex} is {@code
   * ratis_state_machine_applied_index}; a timer's gets {@code _seconds}.
   */
  static String ratisName(String dropwizardName, boolean timer) {
    String snake = ACRONYM_WORD.matcher(dropwizardName).replaceAll("$1_$2");
    snake = LOWER_UPPER.matcher(snake).replaceAll("$1_$2");
    snake = NOT_NAME.matcher(snake).replaceAll("_");
    snake = UNDERSCORES.matcher(snake.toLowerCase(Locale.ROOT)).replaceAll("_");
    if (snake.endsWith("_")) {
      snake = snake.substring(0, snake.length() - 1);
    }
    if (timer && !snake.endsWith("_seconds")) {
      snake = snake + "_seconds";
    }
    return PrometheusNaming.sanitizeMetricName(snake);
  }

  private static MetricSnapshot declaredSnapshot(Family f) {
    if (f.counter()) {
      CounterSnapshot.Builder b = CounterSnapshot.builder().name(f.name()).help(f.help());
      boolean any = false;
      for (Series s : f.series()) {
        Number v = value(s.value());
        if (v != null) {
          b.dataPoint(
              CounterSnapshot.CounterDataPointSnapshot.builder()
                  .labels(s.labels())
                  .value(v.doubleValue())
                  .build());
          any = true;
        }
      }
      return any ? b.build() : null;
    }
    GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(f.name()).help(f.help());
    boolean any = false;
    for (Series s : f.series()) {
      Number v = value(s.value());
      if (v != null) {
        b.dataPoint(
            GaugeSnapshot.GaugeDataPointSnapshot.builder()
                .labels(s.labels())
                .value(v.doubleValue())
                .build());
        any = true;
      }
    }
    return any ? b.build() : null;
  }

  private static Number value(Supplier<Number> source) {
    try {
      return source.get();
    } catch (RuntimeException e) {
      return null; // one unreadable value must not fail the scrape
    }
  }

  private static MetricSnapshot ratisSnapshot(String name, Metric metric) {
    String help = "Ratis " + name;
    if (metric instanceof Counter c) {
      return counter(ratisName(name, false), help, c.getCount());
    } else if (metric instanceof Meter m) {
      return counter(ratisName(name, false), help, m.getCount());
    } else if (metric instanceof Timer t) {
      return summary(ratisName(name, true), help, t.getCount(), t.getSnapshot(), NANOS_PER_SECOND);
    } else if (metric instanceof Histogram h) {
      return summary(ratisName(name, false), help, h.getCount(), h.getSnapshot(), 1);
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
      return GaugeSnapshot.builder()
          .name(ratisName(name, false))
          .help(help)
          .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(d).build())
          .build();
    }
    return null;
  }

  private static CounterSnapshot counter(String name, String help, long count) {
    return CounterSnapshot.builder()
        .name(name)
        .help(help)
        .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(count).build())
        .build();
  }

  /** Dropwizard keeps no sum, so the summary has quantiles and a count only. */
  private static SummarySnapshot summary(
      String name, String help, long count, Snapshot snapshot, double divisor) {
    Quantiles.Builder q = Quantiles.builder();
    for (double quantile : QUANTILES) {
      q.quantile(new Quantile(quantile, snapshot.getValue(quantile) / divisor));
    }
    return SummarySnapshot.builder()
        .name(name)
        .help(help)
        .dataPoint(
            SummarySnapshot.SummaryDataPointSnapshot.builder()
                .count(count)
                .quantiles(q.build())
                .build())
        .build();
  }
}
