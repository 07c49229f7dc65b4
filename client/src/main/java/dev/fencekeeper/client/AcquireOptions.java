package dev.fencekeeper.client;

import java.time.Duration;

/**
 * Optional settings of an acquire. {@code requestId}: a retry with the same id returns the same lease
 * (generated when null). {@code lockDelay}: after the lease ends involuntarily (expiry, revoke), nobody
 * may acquire the resource for this long — for side effects that cannot check tokens.
 */
public record AcquireOptions(String owner, String requestId, Duration lockDelay) {
  public AcquireOptions {
    lockDelay = lockDelay == null ? Duration.ZERO : lockDelay;
  }

  public static AcquireOptions defaults() {
    return new AcquireOptions(null, null, Duration.ZERO);
  }

  public AcquireOptions owner(String value) {
    return new AcquireOptions(value, requestId, lockDelay);
  }

  public AcquireOptions requestId(String value) {
    return new AcquireOptions(owner, value, lockDelay);
  }

  public AcquireOptions lockDelay(Duration value) {
    return new AcquireOptions(owner, requestId, value);
  }
}
