package dev.fencekeeper.client;

/**
 * One change of a lease, as {@link FencingClient#watch} delivers it. Every replica numbers events
 * alike, by the log index of the entry that caused them ({@code index}) and their order within it
 * ({@code seq}), so a watch resumes from any node without a gap or a duplicate.
 *
 * @param index log index of the entry that caused the event
 * @param seq order among the events of that entry
 * @param type what happened
 * @param resource the resource
 * @param token the lease's token
 * @param owner the lease's owner label
 * @param expiresAtMs the lease's deadline after the event, in state-machine time (epoch
 *     milliseconds)
 * @param atMs state-machine time of the event
 * @param requestId for {@link Type#ACQUIRED}: the request id of the granted acquire, else empty
 */
public record LeaseEvent(
    long index,
    int seq,
    Type type,
    String resource,
    long token,
    String owner,
    long expiresAtMs,
    long atMs,
    String requestId) {

  /** What happened to the lease. */
  public enum Type {
    /** Granted (to a direct acquire or to the next waiter). */
    ACQUIRED,
    /** Renewed by its holder. */
    RENEWED,
    /** Released by its holder. */
    RELEASED,
    /** Ended because its deadline passed. */
    EXPIRED,
    /** Ended by an operator's revoke. */
    REVOKED,
    /** A kind of event this client does not know (sent by a newer node). */
    UNKNOWN
  }

  static LeaseEvent of(dev.fencekeeper.proto.LeaseEvent e) {
    Type type =
        switch (e.getType()) {
          case ACQUIRED -> Type.ACQUIRED;
          case RENEWED -> Type.RENEWED;
          case RELEASED -> Type.RELEASED;
          case EXPIRED -> Type.EXPIRED;
          case REVOKED -> Type.REVOKED;
          default -> Type.UNKNOWN;
        };
    return new LeaseEvent(
        e.getIndex(),
        e.getSeq(),
        type,
        e.getResource(),
        e.getToken(),
        e.getOwner(),
        e.getExpiresAtMs(),
        e.getAtMs(),
        e.getRequestId());
  }
}
