package dev.fencekeeper.client;

/**
 * The outcome of a call: what the cluster answered, or {@link #UNAVAILABLE} when no node did.
 * Success codes first, then rejections; {@link #isSuccess()} tells them apart. The command line's
 * exit codes follow these one to one (docs/cli.md).
 */
public enum ResultCode {
  /** Acquire: a new lease, its token in {@code token}. */
  GRANTED,
  /** Renew: {@code expires_at_ms} is the new deadline. */
  RENEWED,
  /** Release: the lease ended now, or (already_ended = true) had ended before. */
  RELEASED,
  /** Write: every key changed; {@code version} / {@code accepted_token} describe the first key. */
  ACCEPTED,
  /** Read / Lease: the value or lease record exists. */
  FOUND,
  /** Read / Lease: no such key or resource record. */
  NOT_FOUND,
  /** Validate: the token is the live lease of the resource. */
  CURRENT,
  /** Validate: a newer token has been issued for the resource. */
  STALE,
  /** Validate: no newer token, but the lease has ended (a token never issued is UNKNOWN_TOKEN). */
  EXPIRED,
  /** Acquire: another live lease; holder in token/holder_owner/expires_at_ms. */
  HELD,
  /** Renew: the token is not the live lease; {@code current_token} names the newest. */
  LEASE_LOST,
  /** Release: the token is not (and never was) the resource's newest lease. */
  NOT_HOLDER,
  /** Write: a newer token exists; it is in {@code current_token}. */
  STALE_TOKEN,
  /** Write: no newer token, but the lease has ended. */
  LEASE_EXPIRED,
  /** Write, validate: the token was never issued for this resource (or it was forgotten). */
  UNKNOWN_TOKEN,
  /** Any: malformed input; {@code message} says which field and why. Nothing changed. */
  INVALID_ARGUMENT,
  /** Any: the node failed to answer; {@code message} says why. Nothing changed. */
  INTERNAL,
  /** Client side only: no node answered in time. The command may or may not have. */
  UNAVAILABLE,
  /** Acquire with a wait: queued behind the holder; {@code position} is the place in line. */
  WAITING,
  /** Acquire: free, but a lock-delay after an involuntary end runs until {@code expires_at_ms}. */
  LOCK_DELAYED,
  /** Watch: events after the given index are no longer kept; re-read state and resume. */
  COMPACTED,
  /** Revoke: the live lease was ended by an operator. */
  REVOKED,
  /**
   * Any: the caller's identity (its TLS certificate) may not do this, or the TLS handshake failed
   * (the node refused this client's certificate, or this client the node's), which {@code message}
   * names. Nothing changed.
   */
  PERMISSION_DENIED,
  /** Any: too many requests pending (leader or node bound). Nothing changed; retry later. */
  OVERLOADED;

  /**
   * True when the call did as asked, or a query was answered with what it found: GRANTED, RENEWED,
   * RELEASED, ACCEPTED, FOUND, NOT_FOUND, CURRENT and REVOKED. False for every refusal, for WAITING
   * (queued, not granted), for a validate's STALE and EXPIRED (the token may not be used) and when
   * no node answered.
   */
  public boolean isSuccess() {
    return switch (this) {
      case GRANTED, RENEWED, RELEASED, ACCEPTED, FOUND, NOT_FOUND, CURRENT, REVOKED -> true;
      default -> false;
    };
  }

  /**
   * The code of a wire answer; one this client does not know (a newer node) is {@link #INTERNAL}.
   */
  static ResultCode of(dev.fencekeeper.proto.ResultCode wire) {
    return switch (wire) {
      case RESULT_CODE_UNSPECIFIED, UNRECOGNIZED, BATCH_ANSWERED -> INTERNAL;
      // Followed to the leader by the client; one left over means no leader answered in time.
      case NOT_LEADER -> UNAVAILABLE;
      default -> valueOf(wire.name());
    };
  }

  /** The wire's code for this one. */
  dev.fencekeeper.proto.ResultCode toWire() {
    return dev.fencekeeper.proto.ResultCode.valueOf(name());
  }
}
