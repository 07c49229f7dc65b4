package dev.fencekeeper.spring.integration;

import dev.fencekeeper.client.Lease;

/**
 * Runs each time a {@link FencekeeperLockRegistry} lock is granted its lease, before {@code lock()}
 * or {@code tryLock()} returns: the place to raise a store's fence to the new token
 * (fencekeeper-jdbc's {@code JdbcFence::advance}), so that the store refuses the previous holder
 * from the moment this one holds the lock, not only from this one's first write.
 *
 * <pre>{@code
 * new FencekeeperLockRegistry(client, "locks/", Duration.ofSeconds(30), fence::advance);
 * }</pre>
 *
 * <p>If it throws, the lease is released at once and the lock attempt throws {@link
 * IllegalStateException} with the cause: work must not run under a token its store could not be
 * told about.
 */
@FunctionalInterface
public interface LeaseFence {
  /** Raises the fence of {@code lease.resource()} to {@code lease.token()}. */
  void advance(Lease lease) throws Exception;
}
