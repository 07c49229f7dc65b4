package dev.fencekeeper.core;

/**
 * A queued acquire. Granted in arrival order, and only while its client is demonstrably still
 * there: the client re-sends its acquire (same request id) to stay queued, each time pushing {@code
 * aliveUntilMs} forward, and gives up at {@code waitUntilMs}. A waiter past either is skipped, so a
 * lease is never granted to a client that has gone away. {@code identity} is the caller that
 * queued; the lease it may be granted records it, and its {@code sessionId}.
 */
public record Waiter(
    String requestId,
    String owner,
    long ttlMs,
    long lockDelayMs,
    long enqueuedAtMs,
    long waitUntilMs,
    long aliveUntilMs,
    String identity,
    String sessionId) {

  public Waiter {
    identity = identity == null ? "" : identity;
    sessionId = sessionId == null ? "" : sessionId;
  }

  public Waiter(
      String requestId,
      String owner,
      long ttlMs,
      long lockDelayMs,
      long enqueuedAtMs,
      long waitUntilMs,
      long aliveUntilMs,
      String identity) {
    this(
        requestId,
        owner,
        ttlMs,
        lockDelayMs,
        enqueuedAtMs,
        waitUntilMs,
        aliveUntilMs,
        identity,
        "");
  }

  public Waiter(
      String requestId,
      String owner,
      long ttlMs,
      long lockDelayMs,
      long enqueuedAtMs,
      long waitUntilMs,
      long aliveUntilMs) {
    this(requestId, owner, ttlMs, lockDelayMs, enqueuedAtMs, waitUntilMs, aliveUntilMs, "");
  }

  boolean isAttendedAt(long nowMs) {
    return waitUntilMs > nowMs && aliveUntilMs > nowMs;
  }
}
