package dev.fencekeeper.server;

import dev.fencekeeper.statemachine.LeaderClock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The leader's expiry ticker: proposes a tick once the leader's clock reaches the earliest deadline
 * of the applied state (a lease's end, a lock-delay's, an idle record's), so that expiry does not
 * wait for traffic. It sleeps until that deadline instead of polling: an idle leader with nothing
 * due wakes not at all, one with leases wakes once per deadline. An applied entry that moves the
 * earliest deadline earlier (a grant, a renewal with a shorter TTL) wakes it through {@link
 * #deadlineMoved}, so an early deadline is not slept through.
 *
 * <p>The deadline is on the leader's time line, which runs at the monotonic clock's rate give or
 * take {@link LeaderClock#SLEW_PPM}; the sleep is shortened by that much, and a wake that finds the
 * deadline not yet reached sleeps again for the rest. So a tick is proposed within the timer's
 * accuracy of the deadline, not up to a polling interval after it.
 *
 * <p>Everything but {@link #deadlineMoved}, {@link #start} and {@link #stop} runs on {@code
 * timer}'s one thread; those three only post work to it, so the apply thread that reports a moved
 * deadline never waits for the ticker, and the ticker never proposes while holding anything apply
 * needs.
 */
final class ExpiryTicker {
  /**
   * How long after a tick that did not commit (or did not clear the deadline) the next is tried.
   */
  static final long RETRY_MS = 10;

  private static final long PPM = 1_000_000L;

  private final ScheduledExecutorService timer;
  private final LongSupplier leaderTimeMs;
  private final LongSupplier nextDeadlineMs;
  private final Supplier<CompletableFuture<Boolean>> proposeTick;

  // Read by any thread, written on the timer's: whether this node leads, and the deadline the
  // scheduled wake is for (Long.MAX_VALUE while none is scheduled or a check is running, so that a
  // deadline moved meanwhile is never missed).
  private volatile boolean leading;
  private volatile long wakeForMs = Long.MAX_VALUE;

  // Timer thread only.
  private ScheduledFuture<?> wake;
  private boolean tickInFlight;
  private long lastTickForMs = Long.MIN_VALUE;

  /**
   * @param timer a single-threaded executor, this ticker's alone
   * @param leaderTimeMs the leader's clock, the one it stamps entries with
   * @param nextDeadlineMs the earliest deadline of the applied state; Long.MAX_VALUE when none
   * @param proposeTick proposes a tick; completes true once it is applied, false (or exceptionally)
   *     if it was not
   */
  ExpiryTicker(
      ScheduledExecutorService timer,
      LongSupplier leaderTimeMs,
      LongSupplier nextDeadlineMs,
      Supplier<CompletableFuture<Boolean>> proposeTick) {
    this.timer = timer;
    this.leaderTimeMs = leaderTimeMs;
    this.nextDeadlineMs = nextDeadlineMs;
    this.proposeTick = proposeTick;
  }

  /** This node leads: tick whenever a deadline is reached, from now until {@link #stop}. */
  void start() {
    leading = true;
    post(this::check);
  }

  /** This node no longer leads (or closes): no more ticks. */
  void stop() {
    leading = false;
    post(this::cancelWake);
  }

  /**
   * An applied entry moved the earliest deadline to {@code deadlineMs}: if that is earlier than the
   * wake scheduled, check again now. Cheap enough for the apply thread: a volatile read, and a post
   * only when the deadline moved earlier.
   */
  void deadlineMoved(long deadlineMs) {
    if (leading && deadlineMs < wakeForMs) {
      post(this::check);
    }
  }

  private void check() {
    cancelWake();
    if (!leading) {
      return;
    }
    long due = nextDeadlineMs.getAsLong();
    long now = leaderTimeMs.getAsLong();
    if (due == Long.MAX_VALUE) {
      return; // nothing to wait for: deadlineMoved wakes this ticker when something is
    }
    if (due > now) {
      lastTickForMs = Long.MIN_VALUE;
      schedule(due, sleepMs(due - now));
      return;
    }
    if (tickInFlight) {
      wakeForMs = due; // the tick's completion checks again
      return;
    }
    if (due == lastTickForMs) {
      // The last tick was applied and this deadline is still there: try again, but no faster
      // than a poll would.
      lastTickForMs = Long.MIN_VALUE;
      schedule(due, RETRY_MS);
      return;
    }
    tickInFlight = true;
    wakeForMs = due;
    CompletableFuture<Boolean> tick;
    try {
      tick = proposeTick.get();
    } catch (RuntimeException e) {
      tick = CompletableFuture.failedFuture(e);
    }
    tick.whenComplete(
        (applied, error) ->
            post(
                () -> {
                  tickInFlight = false;
                  if (error == null && Boolean.TRUE.equals(applied)) {
                    lastTickForMs = due;
                    check();
                  } else {
                    schedule(due, RETRY_MS);
                  }
                }));
  }

  /**
   * How long to sleep on the monotonic clock for the leader's line to advance {@code remainingMs}:
   * the line may run up to {@link LeaderClock#SLEW_PPM} faster, so that much less (whole
   * milliseconds of it: under 2 s the sleep is the remainder, at most 1 ms late), never 0.
   */
  static long sleepMs(long remainingMs) {
    long slew =
        remainingMs / PPM * LeaderClock.SLEW_PPM + remainingMs % PPM * LeaderClock.SLEW_PPM / PPM;
    return Math.max(1, remainingMs - slew);
  }

  private void schedule(long forMs, long delayMs) {
    cancelWake();
    if (!leading) {
      return;
    }
    try {
      wake = timer.schedule(this::check, delayMs, TimeUnit.MILLISECONDS);
      wakeForMs = forMs;
    } catch (RejectedExecutionException closing) {
      // The node is closing.
    }
  }

  private void cancelWake() {
    wakeForMs = Long.MAX_VALUE;
    if (wake != null) {
      wake.cancel(false);
      wake = null;
    }
  }

  private void post(Runnable work) {
    try {
      timer.execute(work);
    } catch (RejectedExecutionException closing) {
      // The node is closing; thrown on Ratis's apply thread it would leave that thread spinning.
    }
  }
}
