package dev.fencekeeper.shedlock;

/**
 * Runs each time {@link FencekeeperLockProvider} is granted a lock, before the task runs: the place
 * to raise a store's fence to the new token (fencekeeper-jdbc's {@code JdbcFence::advance}), so the
 * store refuses the previous holder from the moment this one holds the lock, not only from this
 * one's first write. The lock's token is raw, so the {@code JdbcFence} must be built with {@code
 * .client(client)}: it checks the token with the cluster before the guard row moves.
 *
 * <pre>{@code
 * FencekeeperLockProvider.builder(client)
 *     .acquireFence(lock -> fence.advance(lock.resource(), lock.token()))
 *     .build();
 * }</pre>
 *
 * <p>If it throws, the lock is released at once and the run is skipped (one log line, counted as
 * {@link FencekeeperLockProvider.SkipReason#FENCE_FAILED}): a task must not run under a token its
 * store could not be told about.
 */
@FunctionalInterface
public interface AcquireFence {
  /** Raises the fence of {@code lock.resource()} to {@code lock.token()}. */
  void advance(LockToken lock) throws Exception;
}
