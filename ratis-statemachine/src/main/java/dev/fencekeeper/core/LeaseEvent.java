package dev.fencekeeper.core;

/**
 * Something that happened to a lease, emitted by apply in commit order. {@code requestId} is set on
 * ACQUIRED: the request id of the acquire granted, so that of all the clients queued for the
 * resource only the one granted needs to ask; empty on the other types. {@code sessionId} is the
 * session the lease belongs to (empty: none), so the session's stream carries the event.
 */
public record LeaseEvent(
    Type type,
    String resource,
    long token,
    String owner,
    long expiresAtMs,
    long atMs,
    String requestId,
    String sessionId) {
  public enum Type {
    ACQUIRED,
    RENEWED,
    RELEASED,
    EXPIRED,
    REVOKED
  }

  public LeaseEvent {
    requestId = requestId == null ? "" : requestId;
    sessionId = sessionId == null ? "" : sessionId;
  }

  public LeaseEvent(
      Type type,
      String resource,
      long token,
      String owner,
      long expiresAtMs,
      long atMs,
      String requestId) {
    this(type, resource, token, owner, expiresAtMs, atMs, requestId, "");
  }

  /** The event of {@code lease} on {@code resource}, of its session. */
  static LeaseEvent of(Type type, String resource, LeaseRecord lease, long expiresAtMs, long atMs) {
    return new LeaseEvent(
        type,
        resource,
        lease.token(),
        lease.owner(),
        expiresAtMs,
        atMs,
        type == Type.ACQUIRED ? lease.requestId() : "",
        lease.sessionId());
  }

  public LeaseEvent(
      Type type, String resource, long token, String owner, long expiresAtMs, long atMs) {
    this(type, resource, token, owner, expiresAtMs, atMs, "");
  }
}
