package dev.fencekeeper.spring.integration;

import dev.fencekeeper.client.Lease;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * A Spring Integration lock that is a fencekeeper lease: while the calling thread holds it, {@link
 * #token()} is the lease's fencing token, for the guarded work to fence its writes with. Holding
 * the lock is not enough on its own: the holder can pause past the lease, another instance takes
 * over with a newer token, and only storage that checks the token refuses the paused holder's late
 * write.
 */
public interface FencedLock extends DistributedLock {
  /** The fencekeeper resource this lock is a lease on. */
  String resource();

  /**
   * The fencing token of the lease the calling thread holds.
   *
   * @throws IllegalStateException if the calling thread does not hold this lock
   */
  long token();

  /**
   * The lease the calling thread holds: fenced writes to fencekeeper's own values ({@link
   * Lease#write}), {@link Lease#onLost} and {@link Lease#isValid()}.
   *
   * @throws IllegalStateException if the calling thread does not hold this lock
   */
  Lease lease();
}
