package dev.fencekeeper.core;

/**
 * Something that happened to a lease, emitted by apply in commit order. {@code requestId} is set on
 * ACQUIRED: the request id of the acquire granted, so that of all the clients queued for the
 * resource only the one granted needs to ask; empty on the other types.
 */
public record LeaseEvent(
    Type type,
    String resource,
    long token,
    String owner,
    long expiresAtMs,
    long atMs,
    String requestId) {
  public enum Type {
    ACQUIRED,
    RENEWED,
    RELEASED,
    EXPIRED,
    REVOKED
  }

  public LeaseEvent {
    requestId = requestId == null ? "" : requestId;
  }

  public LeaseEvent(
      Type type, String resource, long token, String owner, long expiresAtMs, long atMs) {
    this(type, resource, token, owner, expiresAtMs, atMs, "");
  }
}
