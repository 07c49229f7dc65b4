package dev.fencekeeper.client;

import dev.fencekeeper.proto.Response;

/**
 * The outcome of a fenced write. Only {@link #isAccepted()} means the value was written; every
 * other code (STALE_TOKEN, LEASE_EXPIRED, UNKNOWN_TOKEN, INVALID_ARGUMENT, PERMISSION_DENIED,
 * OVERLOADED, UNAVAILABLE, ...) means it was not, or, for UNAVAILABLE, that this client cannot
 * tell.
 *
 * <pre>{@code
 * WriteResult r = lease.write(key, value);
 * if (!r.isAccepted()) {
 *   // r.code() says why: stop on STALE_TOKEN / LEASE_EXPIRED, retry UNAVAILABLE with a request id
 * }
 * lease.write(key, value).orThrow();   // or: FencingException unless accepted
 * }</pre>
 */
public final class WriteResult extends Result {
  WriteResult(Response response) {
    super(response);
  }

  /** Every key of the write changed: the only answer that means the write happened. */
  public boolean isAccepted() {
    return code() == ResultCode.ACCEPTED;
  }

  /**
   * This result if the write was accepted; otherwise throws it as a {@link FencingException}
   * ({@code e.code()} says why).
   *
   * @throws FencingException carrying this result unless {@link #isAccepted()}
   */
  @Override
  public WriteResult orThrow() {
    if (!isAccepted()) {
      throw new FencingException(this);
    }
    return this;
  }

  /**
   * A newer token exists: someone else owns the resource now. Stop; retrying with the same token
   * can never succeed.
   */
  public boolean isStale() {
    return code() == ResultCode.STALE_TOKEN;
  }

  /** No newer token exists, but this lease has ended. */
  public boolean isExpired() {
    return code() == ResultCode.LEASE_EXPIRED;
  }
}
