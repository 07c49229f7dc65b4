package dev.fencekeeper.spring.integration;

import dev.fencekeeper.client.Lease;
import java.time.Duration;
import java.util.concurrent.locks.Lock;

/**
 * A Spring Integration lock that is a fencekeeper lease: while the calling thread holds it, {@link
 * #token()} is the lease's fencing token, for the guarded work to fence its writes with. Holding
 * the lock is not enough on its own: the holder can pause past the lease, another instance takes
 * over with a newer token, and only storage that checks the token refuses the paused holder's late
 * write.
 *
 * <p>On Spring Integration 7 every {@code FencedLock} the registry hands out is also a {@code
 * org.springframework.integration.support.locks.DistributedLock} (the two methods with a TTL are
 * that interface's); on Spring Integration 6.5, which has no such interface, it is a plain {@link
 * Lock} with the same methods.
 */
public interface FencedLock extends Lock {
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

  /** As {@link #lock()}, with a lease of {@code ttl} instead of the registry's. */
  void lock(Duration ttl);

  /**
   * As {@link #tryLock(long, java.util.concurrent.TimeUnit)}, waiting up to {@code waitTime}, with
   * a lease of {@code ttl} instead of the registry's.
   */
  boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException;
}
