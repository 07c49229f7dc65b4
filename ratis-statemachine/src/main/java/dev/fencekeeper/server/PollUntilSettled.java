package dev.fencekeeper.server;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Runs a check every {@code period} for as long as it answers that there is more to do, and, once
 * it answers that it is settled, not again until {@link #wake}: a watcher that has nothing to watch
 * on an idle node costs no wake-ups, and the event that could give it something to watch (a change
 * of leader, of members) wakes it.
 *
 * <p>Everything but {@link #start} and {@link #wake} runs on {@code timer}'s one thread; those two
 * only post a check to it. A wake therefore always runs one check after the event that caused it,
 * and a check that settled just before the event is followed by the woken one: no wake is lost.
 */
final class PollUntilSettled {
  private final ScheduledExecutorService timer;
  private final long periodMs;
  private final BooleanSupplier check;

  // Timer thread only: the next periodic check, null while settled.
  private ScheduledFuture<?> next;

  /**
   * @param timer a single-threaded executor, this poll's alone
   * @param period how long after a check that found more to do the next one runs
   * @param check true while there is more to do (poll again), false once settled (wait for a wake);
   *     a check that throws polls again
   */
  PollUntilSettled(ScheduledExecutorService timer, Duration period, BooleanSupplier check) {
    this.timer = timer;
    this.periodMs = period.toMillis();
    this.check = check;
  }

  /** Checks now, and from then on as the checks say. */
  void start() {
    post();
  }

  /** Something the check looks at may have changed: check now, settled or not. */
  void wake() {
    post();
  }

  private void run() {
    if (next != null) {
      next.cancel(false);
      next = null;
    }
    boolean more;
    try {
      more = check.getAsBoolean();
    } catch (RuntimeException e) {
      more = true;
    }
    if (more) {
      try {
        next = timer.schedule(this::run, periodMs, TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException closing) {
        // The node is closing.
      }
    }
  }

  private void post() {
    try {
      timer.execute(this::run);
    } catch (RejectedExecutionException closing) {
      // The node is closing; thrown on a Ratis thread it would disturb that thread.
    }
  }
}
