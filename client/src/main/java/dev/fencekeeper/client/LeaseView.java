package dev.fencekeeper.client;

import dev.fencekeeper.client.Lease.LossReason;
import dev.fencekeeper.client.Lease.State;

/**
 * What this client knows of one lease, at any moment it is asked about: one deadline and one
 * ending, from which {@link #state}, {@link #isValid} and {@link #remaining} are all derived, so
 * they cannot disagree. Deterministic: every method takes the time ({@code System.nanoTime()}
 * scale) it is asked at; nothing here reads a clock or runs a timer. Not thread-safe: {@link Lease}
 * guards it.
 *
 * <p>The rules: a lease is valid until its local deadline or until it ends, whichever is first;
 * past its deadline it is {@link State#LOST} at once ({@link LossReason#DEADLINE_PASSED}), whether
 * or not a timer has noticed; LOST and CLOSED are final, and a renewal answered after either cannot
 * undo it; {@link State#AT_RISK} when an explicit renewal did not succeed or less than a third of
 * the TTL is left; otherwise {@link State#HELD}.
 */
final class LeaseView {
  private final long atRiskMarginNanos;
  private long deadlineNanos;
  private State ended; // LOST or CLOSED once final; null while live
  private LossReason lossReason;
  private boolean lossAnnounced;
  private boolean renewalFailed;

  /** A lease of {@code ttlNanos} whose acquire was sent at {@code sentNanos}. */
  LeaseView(long ttlNanos, long sentNanos) {
    this.atRiskMarginNanos = ttlNanos / 3;
    this.deadlineNanos = sentNanos + Lease.localTtlNanos(ttlNanos);
  }

  private boolean pastDeadline(long now) {
    return now - deadlineNanos >= 0;
  }

  State state(long now) {
    if (ended != null) {
      return ended;
    }
    if (pastDeadline(now)) {
      return State.LOST;
    }
    return renewalFailed || deadlineNanos - now <= atRiskMarginNanos ? State.AT_RISK : State.HELD;
  }

  boolean isValid(long now) {
    return ended == null && !pastDeadline(now);
  }

  /** Nanoseconds left before the local deadline while valid; zero once it is not. */
  long remainingNanos(long now) {
    return isValid(now) ? deadlineNanos - now : 0;
  }

  /** Why it was lost, null while it is not LOST (also when CLOSED). */
  LossReason lossReason(long now) {
    if (ended == null && pastDeadline(now)) {
      return LossReason.DEADLINE_PASSED;
    }
    return ended == State.LOST ? lossReason : null;
  }

  long deadlineNanos() {
    return deadlineNanos;
  }

  long atRiskAtNanos() {
    return deadlineNanos - atRiskMarginNanos;
  }

  /**
   * A renewal sent at {@code sentNanos} for {@code ttlNanos} succeeded; answered at {@code now}.
   * The deadline only moves later, and only while the lease is still valid: one that reached its
   * deadline first stays lost (the cluster may have granted it to someone else meanwhile).
   *
   * @return whether the lease is still live (and its deadline possibly later)
   */
  boolean renewed(long sentNanos, long ttlNanos, long now) {
    if (!isValid(now)) {
      return false;
    }
    long renewed = sentNanos + Lease.localTtlNanos(ttlNanos);
    if (renewed - deadlineNanos > 0) {
      deadlineNanos = renewed;
    }
    renewalFailed = false;
    return true;
  }

  /** An explicit renewal was answered with neither RENEWED nor LEASE_LOST (no node, overload). */
  void renewalFailed() {
    if (ended == null) {
      renewalFailed = true;
    }
  }

  /** The cluster said the lease ended; no effect once it is final. */
  void lost(LossReason reason, long now) {
    if (ended != null) {
      return;
    }
    ended = State.LOST;
    // Past its deadline it was lost already, and already said so by state().
    lossReason = pastDeadline(now) ? LossReason.DEADLINE_PASSED : reason;
  }

  /**
   * The holder closes or abandons it: CLOSED while valid; past its deadline it stays LOST (that
   * loss came first).
   *
   * @return true if the lease was still live: the cluster may still count it (a release is due)
   */
  boolean closed(long now) {
    if (ended != null) {
      return false;
    }
    if (pastDeadline(now)) {
      lost(LossReason.DEADLINE_PASSED, now);
    } else {
      ended = State.CLOSED;
    }
    return true;
  }

  /**
   * The loss to tell listeners about, once: non-null the first time this is asked after the lease
   * became LOST (by the cluster or its deadline), null otherwise.
   */
  LossReason lossToAnnounce(long now) {
    if (ended == null && pastDeadline(now)) {
      lost(LossReason.DEADLINE_PASSED, now);
    }
    if (ended != State.LOST || lossAnnounced) {
      return null;
    }
    lossAnnounced = true;
    return lossReason;
  }
}
