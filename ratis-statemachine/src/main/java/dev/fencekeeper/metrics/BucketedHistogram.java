package dev.fencekeeper.metrics;

import com.codahale.metrics.ExponentiallyDecayingReservoir;
import com.codahale.metrics.Histogram;
import java.util.concurrent.atomic.LongAdder;

/**
 * A Dropwizard histogram that also counts its values into fixed cumulative buckets and keeps their
 * sum, which a Dropwizard reservoir cannot give and a Prometheus histogram needs. JMX still shows
 * the reservoir's quantiles (roughly the last five minutes); {@link PrometheusExport} renders the
 * buckets.
 *
 * <p>Values arrive as longs in a unit of their own ({@code unitsPerBound} of them make one unit of
 * the bounds: 1e9 for a timer's nanoseconds against bounds in seconds, 1 for plain counts).
 */
final class BucketedHistogram extends Histogram {
  private final double[] bounds;
  private final double unitsPerBound;
  // One per bound and one past the last: non-cumulative, so each value touches one adder.
  private final LongAdder[] counts;
  private final LongAdder sum = new LongAdder();

  BucketedHistogram(double[] bounds, double unitsPerBound) {
    super(new ExponentiallyDecayingReservoir());
    this.bounds = bounds.clone();
    this.unitsPerBound = unitsPerBound;
    this.counts = new LongAdder[bounds.length + 1];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = new LongAdder();
    }
  }

  @Override
  public void update(int value) {
    update((long) value);
  }

  @Override
  public void update(long value) {
    super.update(value);
    double scaled = value / unitsPerBound;
    int i = 0;
    while (i < bounds.length && scaled > bounds[i]) {
      i++;
    }
    counts[i].increment();
    sum.add(value);
  }

  /**
   * What Prometheus shows: upper bounds (the last is +Inf) with the values that fell into each
   * bucket alone (not cumulative), their count and their sum.
   */
  record Buckets(double[] upperBounds, long[] counts, long count, double sum) {}

  /**
   * The buckets as of now. The count is the sum of the buckets' counts, so the figures agree with
   * each other even while values arrive.
   */
  Buckets buckets() {
    long[] each = new long[counts.length];
    long total = 0;
    for (int i = 0; i < counts.length; i++) {
      each[i] = counts[i].sum();
      total += each[i];
    }
    double[] upper = new double[counts.length];
    System.arraycopy(bounds, 0, upper, 0, bounds.length);
    upper[bounds.length] = Double.POSITIVE_INFINITY;
    return new Buckets(upper, each, total, sum.sum() / unitsPerBound);
  }
}
