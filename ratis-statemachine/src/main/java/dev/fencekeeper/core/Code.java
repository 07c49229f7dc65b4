package dev.fencekeeper.core;

/**
 * Every outcome of a command or query. Mirrors {@code ResultCode} in fencing.proto; the two are mapped in
 * exactly one place, the state machine's codec, so the core stays free of wire types.
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
  OK,
  HELD,
  LEASE_LOST,
  NOT_HOLDER,
  STALE_TOKEN,
  LEASE_EXPIRED,
  UNKNOWN_TOKEN,
  INVALID_ARGUMENT;

  /** True for outcomes that changed (or, for queries, answered) as the caller asked. */
  public boolean isSuccess() {
    return ordinal() <= OK.ordinal();
  }
}
