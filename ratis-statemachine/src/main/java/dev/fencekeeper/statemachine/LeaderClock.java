package dev.fencekeeper.statemachine;

import java.util.function.LongSupplier;

/**
 * The time a leader stamps into its entries, measured like etcd's lessor measures lease deadlines:
 * on the node's monotonic clock, from an anchor set when the node takes over. The anchor is the
 * later of its wall clock and the replicated state-machine time at takeover, so a new leader
 * continues the time its predecessors stamped instead of freezing it (a clock behind) and takes the
 * wall time as it is otherwise. From then on a step of the wall clock, forward or back, moves no
 * stamp and so no deadline; stamps advance at the rate of the monotonic clock, which NTP may slew
 * by at most 500 ppm. Not leading, the clock is the wall clock (only a leader's stamps are ever
 * used).
 */
public final class LeaderClock {
  private final LongSupplier wallMs;
  private final LongSupplier monotonicNanos;
  private volatile Anchor anchor;

  private record Anchor(long atMs, long atNanos) {}

  public LeaderClock(LongSupplier wallMs, LongSupplier monotonicNanos) {
    this.wallMs = wallMs;
    this.monotonicNanos = monotonicNanos;
  }

  /** The wall clock alone, for tests that drive stamps directly. */
  static LeaderClock wallOnly(LongSupplier wallMs) {
    return new LeaderClock(wallMs, null);
  }

  /**
   * Starts measuring from now, at no earlier than {@code replicatedNowMs}: this node has taken
   * over.
   */
  void anchor(long replicatedNowMs) {
    if (monotonicNanos == null) {
      return;
    }
    long nanos = monotonicNanos.getAsLong();
    anchor = new Anchor(Math.max(wallMs.getAsLong(), replicatedNowMs), nanos);
  }

  /** This node no longer leads: the next takeover anchors afresh. */
  void release() {
    anchor = null;
  }

  /** Milliseconds on the leader's time line (the wall clock when not anchored). */
  public long nowMs() {
    Anchor a = anchor;
    if (a == null) {
      return wallMs.getAsLong();
    }
    return a.atMs() + Math.floorDiv(monotonicNanos.getAsLong() - a.atNanos(), 1_000_000L);
  }
}
