package dev.fencekeeper.client;

import dev.fencekeeper.proto.Response;

/** The outcome of a fenced write. */
public final class WriteResult extends Result {
  WriteResult(Response response) {
    super(response);
  }

  /** Every key of the write changed. */
  public boolean isAccepted() {
    return code() == ResultCode.ACCEPTED;
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
