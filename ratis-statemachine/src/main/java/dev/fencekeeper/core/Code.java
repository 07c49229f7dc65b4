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
  OVERLOADED
}
