package dev.fencekeeper.core;

/**
 * One acquisition of a resource. {@code graceUsed} is set when a leader takeover extended the lease
 * and cleared by a renewal: a lease gets at most one grace per renewal, so back-to-back elections
 * cannot keep a dead holder's lease alive (the etcd bug this design avoids). {@code requestId} is
 * the acquire's idempotency key; {@code lockDelayMs} how long the resource stays ungrantable after
 * this lease ends involuntarily. {@code identity} is the authenticated caller that acquired it (its
 * TLS certificate's CN; empty without TLS): when set, only that caller may renew, release or write
 * with the lease. {@code sessionId} names the session whose keep-alives renew it (empty: none).
 */
public record LeaseRecord(
    long token,
    String owner,
    long ttlMs,
    long expiresAtMs,
    boolean graceUsed,
    String requestId,
    long lockDelayMs,
    String identity,
    String sessionId) {

  public LeaseRecord {
    identity = identity == null ? "" : identity;
    sessionId = sessionId == null ? "" : sessionId;
  }

  public LeaseRecord(
      long token,
      String owner,
      long ttlMs,
      long expiresAtMs,
      boolean graceUsed,
      String requestId,
      long lockDelayMs,
      String identity) {
    this(token, owner, ttlMs, expiresAtMs, graceUsed, requestId, lockDelayMs, identity, "");
  }

  public LeaseRecord(
      long token,
      String owner,
      long ttlMs,
      long expiresAtMs,
      boolean graceUsed,
      String requestId,
      long lockDelayMs) {
    this(token, owner, ttlMs, expiresAtMs, graceUsed, requestId, lockDelayMs, "");
  }

  public LeaseRecord(long token, String owner, long ttlMs, long expiresAtMs, boolean graceUsed) {
    this(token, owner, ttlMs, expiresAtMs, graceUsed, "", 0);
  }

  /**
   * True when {@code caller} may act on this lease: the lease was acquired without an identity (no
   * TLS), or by this very caller.
   */
  public boolean permits(String caller) {
    return identity.isEmpty() || identity.equals(caller);
  }

  public boolean isLiveAt(long nowMs) {
    return expiresAtMs > nowMs;
  }

  LeaseRecord withExpiry(long newExpiresAtMs, boolean newGraceUsed) {
    return new LeaseRecord(
        token,
        owner,
        ttlMs,
        newExpiresAtMs,
        newGraceUsed,
        requestId,
        lockDelayMs,
        identity,
        sessionId);
  }

  /** This lease renewed at {@code nowMs} for {@code newTtlMs}: a fresh deadline, grace unused. */
  LeaseRecord renewedAt(long nowMs, long newTtlMs) {
    return new LeaseRecord(
        token,
        owner,
        newTtlMs,
        nowMs + newTtlMs,
        false,
        requestId,
        lockDelayMs,
        identity,
        sessionId);
  }
}
