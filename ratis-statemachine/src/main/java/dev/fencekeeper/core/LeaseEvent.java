package dev.fencekeeper.core;

/** Something that happened to a lease, emitted by apply in commit order. */
public record LeaseEvent(Type type, String resource, long token, String owner, long expiresAtMs, long atMs) {
  public enum Type {
    ACQUIRED,
    RENEWED,
    RELEASED,
    EXPIRED,
    REVOKED
  }
}
