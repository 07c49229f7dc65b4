package dev.fencekeeper.client;

import java.time.Duration;

/**
 * Optional settings of an acquire. {@code requestId}: a retry with the same id returns the same
 * lease (generated when null). {@code lockDelay}: after the lease ends involuntarily (expiry,
 * revoke), nobody may acquire the resource for this long — for side effects that cannot check
 * tokens.
 */
public record AcquireOptions(String owner, String requestId, Duration lockDelay) {
  /** Options as given; a null lock-delay means none. */
  public AcquireOptions {
    lockDelay = lockDelay == null ? Duration.ZERO : lockDelay;
  }

  /** No owner (the client's own), a generated request id, no lock-delay. */
  public static AcquireOptions defaults() {
    return new AcquireOptions(null, null, Duration.ZERO);
  }

  /** These options with owner label {@code value}. */
  public AcquireOptions owner(String value) {
    return new AcquireOptions(value, requestId, lockDelay);
  }

  /**
   * These options with request id {@code value}: a retry with the same id returns the same lease.
   */
  public AcquireOptions requestId(String value) {
    return new AcquireOptions(owner, value, lockDelay);
  }

  /** These options with lock-delay {@code value}. */
  public AcquireOptions lockDelay(Duration value) {
    return new AcquireOptions(owner, requestId, value);
  }
}
