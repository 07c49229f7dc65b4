package dev.fencekeeper.shedlock;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Optional;

/**
 * The fencing token of the ShedLock lock the current thread holds, for the task to fence its own
 * writes with. ShedLock runs a {@code @SchedulerLock} method on the thread that acquired its lock,
 * so the token is bound to that thread from the moment {@link FencekeeperLockProvider} grants the
 * lock until it is unlocked, or until its {@code lockAtMostFor} (as extended) has passed; an
 * extension keeps the same lease and so the same token.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 1 * * *")
 * @SchedulerLock(name = "daily-sales-report", lockAtMostFor = "10m")
 * void report() {
 *   LockToken lock = LockToken.current();
 *   fence.inTransaction(lock.resource(), lock.token(), conn -> writeReport(conn));
 * }
 * }</pre>
 *
 * <p>Holding the lock does not make a write safe: the task can pause past {@code lockAtMostFor},
 * another instance takes over with a newer token, and the paused task wakes up still inside its
 * method. The token is what lets the storage refuse that late write.
 *
 * @param lockName the ShedLock name ({@code @SchedulerLock(name = ...)})
 * @param resource the fencekeeper resource the lock is a lease on
 * @param token the lease's fencing token
 */
public record LockToken(String lockName, String resource, long token) {
  private static final ThreadLocal<Deque<Binding>> HELD = ThreadLocal.withInitial(ArrayDeque::new);

  /**
   * The innermost fencekeeper lock this thread holds.
   *
   * @throws IllegalStateException if this thread holds none
   */
  public static LockToken current() {
    return find()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "this thread holds no live fencekeeper lock: call LockToken.current() from a"
                        + " @SchedulerLock task (or LockingTaskExecutor task) whose LockProvider is"
                        + " a FencekeeperLockProvider, before the lock's lockAtMostFor has"
                        + " passed"));
  }

  /** The innermost fencekeeper lock this thread holds, if any. */
  public static Optional<LockToken> find() {
    Deque<Binding> held = HELD.get();
    prune(held);
    Binding top = held.peekFirst();
    return top == null ? Optional.empty() : Optional.of(top.token);
  }

  /** The lock of that ShedLock name held by this thread, if any (for nested locks). */
  public static Optional<LockToken> find(String lockName) {
    Deque<Binding> held = HELD.get();
    prune(held);
    for (Binding b : held) {
      if (b.token.lockName.equals(lockName)) {
        return Optional.of(b.token);
      }
    }
    return Optional.empty();
  }

  static Binding bind(LockToken token, long deadlineNanos) {
    Binding binding = new Binding(token, deadlineNanos);
    HELD.get().addFirst(binding);
    return binding;
  }

  /**
   * Drops what this thread no longer holds: locks unlocked on another thread (which cannot reach
   * this thread's deque and only mark the binding ended), and locks past {@code lockAtMostFor} that
   * nobody unlocked, whose lease the cluster has ended.
   */
  private static void prune(Deque<Binding> held) {
    long now = System.nanoTime();
    for (Iterator<Binding> it = held.iterator(); it.hasNext(); ) {
      Binding b = it.next();
      if (b.ended || now - b.deadlineNanos >= 0) {
        it.remove();
      }
    }
    if (held.isEmpty()) {
      HELD.remove();
    }
  }

  /** One acquired lease's place on its thread; shared by the lock and every extension of it. */
  static final class Binding {
    final LockToken token;
    volatile boolean ended;
    // lockAtMostFor after the acquire or latest extension was sent: the cluster's deadline is no
    // earlier.
    volatile long deadlineNanos;

    private Binding(LockToken token, long deadlineNanos) {
      this.token = token;
      this.deadlineNanos = deadlineNanos;
    }

    void end() {
      ended = true;
      Deque<Binding> held = HELD.get();
      held.remove(this);
      if (held.isEmpty()) {
        HELD.remove();
      }
    }
  }
}
