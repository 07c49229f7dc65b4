package dev.fencekeeper.core;

/**
 * Every outcome of a command or query. Mirrors {@code ResultCode} in fencing.proto; the two are
 * mapped in exactly one place, the state machine's codec, so the core stays free of wire types.
 */
public enum Code {
  GRANTED,
  RENEWED,
  RELEASED,
  ACCEPTED,
  FOUND,
  NOT_FOUND,
  CURRENT,
  STALE,
  EXPIRED,
  REVOKED,
  OK,
  WAITING,
  HELD,
  LOCK_DELAYED,
  LEASE_LOST,
  NOT_HOLDER,
  STALE_TOKEN,
  LEASE_EXPIRED,
  UNKNOWN_TOKEN,
  INVALID_ARGUMENT,
  PERMISSION_DENIED,
  OVERLOADED;

  /**
   * True when the command did as asked, or the query was answered with what it found (NOT_FOUND
   * included); false for every refusal, for WAITING (queued, not granted) and for a validate's
   * STALE and EXPIRED (the token may not be used). OK, the answer to the leader's internal
   * commands, is a success too. This is the rule of the client's {@code ResultCode.isSuccess},
   * stated on the core's codes (the core cannot see the wire's); {@code CodeMappingTest} holds the
   * two together.
   */
  public boolean isSuccess() {
    return switch (this) {
      case GRANTED, RENEWED, RELEASED, ACCEPTED, FOUND, NOT_FOUND, CURRENT, REVOKED, OK -> true;
      default -> false;
    };
  }
}
