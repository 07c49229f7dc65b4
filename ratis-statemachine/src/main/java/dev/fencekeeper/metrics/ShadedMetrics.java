package dev.fencekeeper.metrics;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.Metric;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import com.codahale.metrics.UniformReservoir;
import java.io.OutputStream;

/**
 * Read-only views of Ratis's shaded Dropwizard metrics ({@code
 * org.apache.ratis.thirdparty.com.codahale}) as ordinary Dropwizard 4.2 metrics, so they can sit in
 * a node's {@code MetricRegistry} and reach JMX and Prometheus through the same reporters as
 * fencekeeper's own. Each view reads the live shaded metric on every call; nothing is copied or
 * sampled here. Writes through a view (inc, mark, update) are not forwarded: Ratis owns these
 * metrics.
 *
 * <p>This compiles against Ratis's shaded classes, which are internal to Ratis: re-check on
 * upgrade.
 */
final class ShadedMetrics {
  private ShadedMetrics() {}

  /** A Dropwizard view of {@code shaded}, or null for a metric type this bridge does not know. */
  static Metric view(org.apache.ratis.thirdparty.com.codahale.metrics.Metric shaded) {
    if (shaded instanceof org.apache.ratis.thirdparty.com.codahale.metrics.Gauge<?> g) {
      return gauge(g);
    }
    if (shaded instanceof org.apache.ratis.thirdparty.com.codahale.metrics.Counter c) {
      return new CounterView(c);
    }
    if (shaded instanceof org.apache.ratis.thirdparty.com.codahale.metrics.Timer t) {
      return new TimerView(t);
    }
    if (shaded instanceof org.apache.ratis.thirdparty.com.codahale.metrics.Meter m) {
      return new MeterView(m);
    }
    if (shaded instanceof org.apache.ratis.thirdparty.com.codahale.metrics.Histogram h) {
      return new HistogramView(h);
    }
    return null;
  }

  /**
   * A gauge whose failure reads as "no value" (the Prometheus bridge skips it, JMX shows null): a
   * gauge of a division that is shutting down must not fail the whole scrape.
   */
  static Gauge<Object> gauge(org.apache.ratis.thirdparty.com.codahale.metrics.Gauge<?> g) {
    return () -> {
      try {
        return g.getValue();
      } catch (RuntimeException e) {
        return null;
      }
    };
  }

  static final class CounterView extends Counter {
    private final org.apache.ratis.thirdparty.com.codahale.metrics.Counter shaded;

    CounterView(org.apache.ratis.thirdparty.com.codahale.metrics.Counter shaded) {
      this.shaded = shaded;
    }

    @Override
    public long getCount() {
      return shaded.getCount();
    }
  }

  static final class MeterView extends Meter {
    private final org.apache.ratis.thirdparty.com.codahale.metrics.Meter shaded;

    MeterView(org.apache.ratis.thirdparty.com.codahale.metrics.Meter shaded) {
      this.shaded = shaded;
    }

    @Override
    public long getCount() {
      return shaded.getCount();
    }

    @Override
    public double getMeanRate() {
      return shaded.getMeanRate();
    }

    @Override
    public double getOneMinuteRate() {
      return shaded.getOneMinuteRate();
    }

    @Override
    public double getFiveMinuteRate() {
      return shaded.getFiveMinuteRate();
    }

    @Override
    public double getFifteenMinuteRate() {
      return shaded.getFifteenMinuteRate();
    }
  }

  static final class HistogramView extends Histogram {
    private final org.apache.ratis.thirdparty.com.codahale.metrics.Histogram shaded;

    HistogramView(org.apache.ratis.thirdparty.com.codahale.metrics.Histogram shaded) {
      super(new UniformReservoir(1)); // unused: every read goes to the shaded histogram
      this.shaded = shaded;
    }

    @Override
    public long getCount() {
      return shaded.getCount();
    }

    @Override
    public Snapshot getSnapshot() {
      return new SnapshotView(shaded.getSnapshot());
    }
  }

  static final class TimerView extends Timer {
    private final org.apache.ratis.thirdparty.com.codahale.metrics.Timer shaded;

    TimerView(org.apache.ratis.thirdparty.com.codahale.metrics.Timer shaded) {
      super(new UniformReservoir(1)); // unused: every read goes to the shaded timer
      this.shaded = shaded;
    }

    @Override
    public long getCount() {
      return shaded.getCount();
    }

    @Override
    public double getMeanRate() {
      return shaded.getMeanRate();
    }

    @Override
    public double getOneMinuteRate() {
      return shaded.getOneMinuteRate();
    }

    @Override
    public double getFiveMinuteRate() {
      return shaded.getFiveMinuteRate();
    }

    @Override
    public double getFifteenMinuteRate() {
      return shaded.getFifteenMinuteRate();
    }

    @Override
    public Snapshot getSnapshot() {
      return new SnapshotView(shaded.getSnapshot());
    }
  }

  static final class SnapshotView extends Snapshot {
    private final org.apache.ratis.thirdparty.com.codahale.metrics.Snapshot shaded;

    SnapshotView(org.apache.ratis.thirdparty.com.codahale.metrics.Snapshot shaded) {
      this.shaded = shaded;
    }

    @Override
    public double getValue(double quantile) {
      return shaded.getValue(quantile);
    }

    @Override
    public long[] getValues() {
      return shaded.getValues();
    }

    @Override
    public int size() {
      return shaded.size();
    }

    @Override
    public long getMax() {
      return shaded.getMax();
    }

    @Override
    public double getMean() {
      return shaded.getMean();
    }

    @Override
    public long getMin() {
      return shaded.getMin();
    }

    @Override
    public double getStdDev() {
      return shaded.getStdDev();
    }

    @Override
    public void dump(OutputStream output) {
      shaded.dump(output);
    }
  }
}
