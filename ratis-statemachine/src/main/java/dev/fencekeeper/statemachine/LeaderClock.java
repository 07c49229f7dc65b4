package dev.fencekeeper.statemachine;

import java.util.function.LongSupplier;

/**
 * The time a leader stamps into its entries, measured like etcd's lessor measures lease deadlines:
 * on the node's monotonic clock. A node that takes over continues the replicated time line from the
 * last time stamped into the log, advanced by its own monotonic clock since it applied that entry,
 * whatever its wall clock says: a wall clock ahead would otherwise end every lease at once, and one
 * behind would freeze time. So a leader change never shortens a lease (the successor's estimate of
 * the line is never ahead of its predecessor's). After the whole cluster was down, the line resumes
 * where it stopped: the downtime is not counted, leases live at shutdown get their remaining time,
 * and the line runs behind wall time by the downtime until the slew below closes the gap.
 *
 * <p>From then on the line advances with the monotonic clock and slews toward the wall clock at no
 * more than {@value #SLEW_PPM} ppm, the bound NTP itself slews within, so the times clients are
 * shown come back to wall time after an election without any step: a step of the wall clock,
 * forward or back, moves no stamp and so no deadline. Not leading, the clock is the wall clock
 * (only a leader's stamps are ever used).
 */
public final class LeaderClock {
  /** How far, in parts per million, the line's rate may differ from the monotonic clock's. */
  public static final long SLEW_PPM = 500;

  private static final long NANOS_PER_MS = 1_000_000L;

  private final LongSupplier wallMs;
  private final LongSupplier monotonicNanos;

  /** The line's time in nanoseconds since the epoch and the monotonic reading it was taken at. */
  private record Line(long atNanos, long monotonicAt) {}

  /** The newest stamp this replica applied and the monotonic reading when it did. */
  private record Applied(long stampMs, long monotonicAt) {}

  private volatile Line line;
  private volatile Applied applied;

  public LeaderClock(LongSupplier wallMs, LongSupplier monotonicNanos) {
    this.wallMs = wallMs;
    this.monotonicNanos = monotonicNanos;
  }

  /** The wall clock alone, for tests that drive stamps directly. */
  static LeaderClock wallOnly(LongSupplier wallMs) {
    return new LeaderClock(wallMs, null);
  }

  /**
   * This node has taken over: the line continues from the replicated time, {@code replicatedNowMs}
   * advanced by the monotonic time since this node applied it, so the election's duration is
   * counted and no wall clock is. A state that has no time yet (a new cluster) starts from the wall
   * clock. A line already running (see {@link #stampMs}) never moves back.
   */
  synchronized void anchor(long replicatedNowMs) {
    if (monotonicNanos == null) {
      return;
    }
    long nanos = monotonicNanos.getAsLong();
    long startMs;
    if (replicatedNowMs == 0) {
      startMs = wallMs.getAsLong();
    } else {
      Applied a = applied;
      long sinceApplied =
          a == null || a.stampMs() != replicatedNowMs
              ? 0
              : (nanos - a.monotonicAt()) / NANOS_PER_MS;
      startMs = replicatedNowMs + Math.max(0, sinceApplied);
    }
    long startNanos = startMs * NANOS_PER_MS;
    if (line != null) {
      startNanos = Math.max(startNanos, advance(nanos).atNanos());
    }
    line = new Line(startNanos, nanos);
  }

  /**
   * The stamp for an entry this node proposes as leader. Ratis may admit a request between this
   * node's leadership becoming ready and {@link #anchor} being called: that request continues the
   * line from {@code replicatedNowMs} as the takeover does, rather than stamping the wall clock.
   */
  long stampMs(LongSupplier replicatedNowMs) {
    if (line == null && monotonicNanos != null) {
      long replicated = replicatedNowMs.getAsLong();
      synchronized (this) {
        if (line == null) {
          anchor(replicated);
        }
      }
    }
    return nowMs();
  }

  /** This node no longer leads: the next takeover anchors afresh. */
  synchronized void release() {
    line = null;
  }

  /** Milliseconds on the leader's time line (the wall clock when not anchored). */
  public long nowMs() {
    if (line == null) {
      return wallMs.getAsLong();
    }
    synchronized (this) {
      if (line == null) {
        return wallMs.getAsLong();
      }
      return Math.floorDiv(advance(monotonicNanos.getAsLong()).atNanos(), NANOS_PER_MS);
    }
  }

  /** Moves the line to {@code monotonic}, slewing toward the wall clock within the bound. */
  private Line advance(long monotonic) {
    Line l = line;
    long elapsed = monotonic - l.monotonicAt();
    if (elapsed <= 0) {
      return l;
    }
    long advanced = l.atNanos() + elapsed;
    long maxSlew = elapsed / 1_000_000L * SLEW_PPM + elapsed % 1_000_000L * SLEW_PPM / 1_000_000L;
    long towardWall = wallMs.getAsLong() * NANOS_PER_MS - advanced;
    l = new Line(advanced + Math.max(-maxSlew, Math.min(maxSlew, towardWall)), monotonic);
    line = l;
    return l;
  }

  /** Every replica: it has just applied an entry, and the replicated time is {@code stampMs}. */
  void applied(long stampMs) {
    if (monotonicNanos != null) {
      applied = new Applied(stampMs, monotonicNanos.getAsLong());
    }
  }

  /**
   * How far this node's wall clock is ahead of the replicated time line (negative: behind), in
   * milliseconds: against the line it stamps while leading; otherwise against the newest stamp it
   * applied, advanced by the monotonic time since (the line's own rate). Null before either.
   */
  public Long wallAheadMs() {
    if (line != null) {
      return wallMs.getAsLong() - nowMs();
    }
    Applied a = applied;
    if (a == null) {
      return null;
    }
    long sinceMs = (monotonicNanos.getAsLong() - a.monotonicAt()) / NANOS_PER_MS;
    return wallMs.getAsLong() - (a.stampMs() + sinceMs);
  }
}
