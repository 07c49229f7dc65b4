package dev.fencekeeper.metrics;

import com.codahale.metrics.Clock;
import com.codahale.metrics.Meter;
import com.codahale.metrics.Timer;

/**
 * A Dropwizard timer whose durations also fall into cumulative buckets in seconds ({@link
 * BucketedHistogram}): every way of timing (update, {@code time()}, a context) goes through the
 * histogram, in nanoseconds.
 */
final class BucketedTimer extends Timer {
  private static final double NANOS_PER_SECOND = 1e9;
  private final BucketedHistogram histogram;

  private BucketedTimer(BucketedHistogram histogram) {
    super(new Meter(), histogram, Clock.defaultClock());
    this.histogram = histogram;
  }

  /** A timer with these upper bucket bounds, in seconds. */
  static BucketedTimer withBounds(double[] seconds) {
    return new BucketedTimer(new BucketedHistogram(seconds, NANOS_PER_SECOND));
  }

  BucketedHistogram.Buckets buckets() {
    return histogram.buckets();
  }
}
