package dev.fencekeeper.tools.drill.history;

/**
 * A lease event as the replicated state machine reported it through a watch, in commit order.
 *
 * @param index log index of the entry that caused it
 * @param seq order among the events of that entry
 * @param type ACQUIRED, RENEWED, RELEASED, EXPIRED or REVOKED
 * @param atMs state-machine time of the event (for EXPIRED: the lease's deadline)
 * @param observedNanos when the watcher received it, on the history's monotonic clock: the event
 *     certainly happened before this instant
 */
public record LeaseEventRecord(
    long index,
    int seq,
    Type type,
    String resource,
    long token,
    String owner,
    long expiresAtMs,
    long atMs,
    long observedNanos) {

  public enum Type {
    ACQUIRED,
    RENEWED,
    RELEASED,
    EXPIRED,
    REVOKED
  }

  public boolean endsLease() {
    return type == Type.RELEASED || type == Type.EXPIRED || type == Type.REVOKED;
  }

  public String describe() {
    return "event @"
        + index
        + "."
        + seq
        + " "
        + type
        + " "
        + resource
        + " token "
        + token
        + " ("
        + owner
        + ") at sm-time "
        + atMs
        + (type == Type.ACQUIRED || type == Type.RENEWED ? " until " + expiresAtMs : "");
  }
}
