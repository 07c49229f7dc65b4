package dev.fencekeeper.metrics;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Metric;
import com.codahale.metrics.MetricRegistry;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The series of each {@link NodeMetric} in one node's Dropwizard registry: registered there under
 * the metric's Dropwizard name and remembered here by label values, for {@link PrometheusExport}.
 */
final class NodeSeries {
  private final MetricRegistry registry;
  private final Map<NodeMetric, Map<List<String>, Metric>> series = new EnumMap<>(NodeMetric.class);

  NodeSeries(MetricRegistry registry) {
    this.registry = registry;
  }

  Counter counter(NodeMetric metric, String... labelValues) {
    return add(metric, NodeMetric.Type.COUNTER, new Counter(), labelValues);
  }

  BucketedTimer timer(NodeMetric metric, String... labelValues) {
    return add(
        metric, NodeMetric.Type.TIMER, BucketedTimer.withBounds(metric.buckets()), labelValues);
  }

  BucketedHistogram histogram(NodeMetric metric, String... labelValues) {
    return add(
        metric, NodeMetric.Type.HISTOGRAM, new BucketedHistogram(metric.buckets(), 1), labelValues);
  }

  /**
   * A gauge reading {@code value} at each scrape; a null value, or one that fails, is no sample
   * (and null in JMX).
   */
  void gauge(NodeMetric metric, Supplier<? extends Number> value, String... labelValues) {
    Gauge<Number> gauge =
        () -> {
          try {
            return value.get();
          } catch (RuntimeException e) {
            return null;
          }
        };
    add(
        metric,
        metric.type() == NodeMetric.Type.INFO ? metric.type() : NodeMetric.Type.GAUGE,
        gauge,
        labelValues);
  }

  /** The series of {@code metric}, by label values in the order of its label names. */
  synchronized Map<List<String>, Metric> of(NodeMetric metric) {
    Map<List<String>, Metric> m = series.get(metric);
    return m == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(m));
  }

  private synchronized <M extends Metric> M add(
      NodeMetric metric, NodeMetric.Type type, M dropwizard, String... labelValues) {
    if (metric.type() != type) {
      throw new IllegalArgumentException(metric + " is a " + metric.type() + ", not a " + type);
    }
    if (labelValues.length != metric.labelNames().size()) {
      throw new IllegalArgumentException(metric + " has labels " + metric.labelNames());
    }
    List<String> values = List.of(labelValues);
    registry.register(metric.dropwizardName(values), dropwizard);
    series.computeIfAbsent(metric, m -> new LinkedHashMap<>()).put(values, dropwizard);
    return dropwizard;
  }
}
