package dev.fencekeeper.shedlock;

import dev.fencekeeper.client.AcquireOptions;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.LongAdder;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock {@code LockProvider} whose locks are fencekeeper leases, each with a fencing token the
 * task reads through {@link LockToken#current()}.
 *
 * <ul>
 *   <li>{@code lockAtMostFor} is the lease TTL. By default the lease is not renewed in the
 *       background: as with every ShedLock provider, a task that runs longer than {@code
 *       lockAtMostFor} loses the lock unless it extends it ({@link SimpleLock#extend}, {@code
 *       LockExtender.extendActiveLock}) or the provider keeps it alive ({@link Builder#keepAlive}).
 *       Unlike other providers, the loss is fenced: the next holder's token is newer, so the late
 *       task's fenced writes are refused.
 *   <li>{@code lockAtLeastFor} is honoured on unlock: while some of it remains, the lease is
 *       renewed to the remaining time instead of released, and ends by itself.
 *   <li>A lock held by anyone (this instance included) yields {@code Optional.empty()}, as ShedLock
 *       expects, and so does a grant that arrives after its own {@code lockAtMostFor} (it is
 *       released).
 *   <li>An expected outage skips the run with one log line and no stack trace, counted by {@link
 *       #skipped(SkipReason)}: no node answered ({@link SkipReason#UNAVAILABLE}), or the {@link
 *       Builder#acquireFence acquire fence} failed ({@link SkipReason#FENCE_FAILED}; the lock is
 *       released). Any other failure (a TTL outside the cluster's limits) throws {@link
 *       LockException} naming the result.
 * </ul>
 */
public final class FencekeeperLockProvider implements ExtensibleLockProvider, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FencekeeperLockProvider.class);

  private final FencingClient client;
  private final String resourcePrefix;
  private final String owner;
  // Renews held locks while their task runs; null unless built with keepAlive(true).
  private final ScheduledExecutorService keepAlive;
  private final AcquireFence acquireFence;
  private final Map<SkipReason, LongAdder> skipped = new EnumMap<>(SkipReason.class);

  /** Why a lock attempt was skipped without running its task, other than the lock being held. */
  public enum SkipReason {
    /** No node of the cluster answered (an outage, a network partition). */
    UNAVAILABLE,
    /** The lock was granted, but the {@link AcquireFence} failed; the lock was released. */
    FENCE_FAILED
  }

  private FencekeeperLockProvider(Builder b) {
    this.client = b.client;
    this.resourcePrefix = b.resourcePrefix;
    this.owner = b.owner;
    this.acquireFence = b.acquireFence;
    for (SkipReason reason : SkipReason.values()) {
      skipped.put(reason, new LongAdder());
    }
    this.keepAlive =
        b.keepAlive
            ? Executors.newSingleThreadScheduledExecutor(
                r -> {
                  Thread t = new Thread(r, "fencekeeper-shedlock-keep-alive");
                  t.setDaemon(true);
                  return t;
                })
            : null;
  }

  /** Locks the resource named exactly as the ShedLock lock, labelled with the client's owner. */
  public FencekeeperLockProvider(FencingClient client) {
    this(builder(client));
  }

  public static Builder builder(FencingClient client) {
    return new Builder(client);
  }

  /** The fencekeeper resource that ShedLock lock {@code lockName} is a lease on. */
  public String resourceFor(String lockName) {
    return resourcePrefix + lockName;
  }

  @Override
  public Optional<SimpleLock> lock(LockConfiguration config) {
    String resource = resourceFor(config.getName());
    long sentNanos = System.nanoTime();
    Result result =
        client.acquireToken(
            resource, config.getLockAtMostFor(), AcquireOptions.defaults().owner(owner));
    switch (result.code()) {
      case GRANTED:
        long deadlineNanos = sentNanos + config.getLockAtMostFor().toNanos();
        if (System.nanoTime() - deadlineNanos >= 0) {
          // The grant took longer than lockAtMostFor to arrive (a cold start, a loaded host): by
          // the only clock that is safe to trust here, the lock is already over. Running the task
          // under it would leave it no time at all, so give it back and let the next run try.
          LOG.warn(
              "Lock {} (resource {}, token {}) was granted after its lockAtMostFor {} had passed;"
                  + " released without running the task",
              config.getName(),
              resource,
              result.token(),
              config.getLockAtMostFor());
          client.release(resource, result.token());
          return Optional.empty();
        }
        LockToken token = new LockToken(config.getName(), resource, result.token());
        if (acquireFence != null && !advanceFence(token)) {
          return Optional.empty();
        }
        LockToken.Binding binding = LockToken.bind(token, deadlineNanos);
        return Optional.of(new FencekeeperLock(this, config, binding, sentNanos));
      case HELD:
      case LOCK_DELAYED:
        return Optional.empty();
      case UNAVAILABLE:
        // An outage is expected to happen: one line per attempt, no stack trace, and no run.
        skipped.get(SkipReason.UNAVAILABLE).increment();
        LOG.warn(
            "Lock {} (resource {}) not taken, run skipped: {}",
            config.getName(),
            resource,
            oneLine(result));
        return Optional.empty();
      default:
        throw new LockException(
            "fencekeeper could not lock '"
                + config.getName()
                + "' (resource '"
                + resource
                + "', lockAtMostFor "
                + config.getLockAtMostFor()
                + "): "
                + result);
    }
  }

  /**
   * Raises the store's fence to the new token; false (lock released, one line logged) if that
   * failed.
   */
  private boolean advanceFence(LockToken token) {
    try {
      acquireFence.advance(token);
      return true;
    } catch (Exception e) {
      skipped.get(SkipReason.FENCE_FAILED).increment();
      LOG.warn(
          "Lock {} (resource {}, token {}) released, run skipped: raising the fence at acquire"
              + " failed: {}",
          token.lockName(),
          token.resource(),
          token.token(),
          e.toString());
      client.release(token.resource(), token.token());
      return false;
    }
  }

  private static String oneLine(Result result) {
    String message = result.message();
    return result.code() + (message == null || message.isEmpty() ? "" : " (" + message + ")");
  }

  /** How many lock attempts this provider skipped for {@code reason} since it was built. */
  public long skipped(SkipReason reason) {
    return skipped.get(reason).sum();
  }

  FencingClient client() {
    return client;
  }

  /** The keep-alive scheduler, or null when locks end at their {@code lockAtMostFor}. */
  ScheduledExecutorService keepAlive() {
    return keepAlive;
  }

  /**
   * Stops renewing held locks (they then end at their {@code lockAtMostFor}); nothing else to
   * release.
   */
  @Override
  public void close() {
    if (keepAlive != null) {
      keepAlive.shutdownNow();
    }
  }

  /**
   * The shortest TTL the cluster grants; a shorter remainder of {@code lockAtLeastFor} is rounded
   * up.
   */
  Duration minTtl() {
    return client.config().limits().minTtl();
  }

  public static final class Builder {
    private final FencingClient client;
    private String resourcePrefix = "";
    private String owner;
    private boolean keepAlive;
    private AcquireFence acquireFence;

    private Builder(FencingClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * Prepended to every lock name to form the resource (e.g. {@code "shedlock/"}), to keep
     * ShedLock's names apart from other users of the cluster. Empty by default.
     */
    public Builder resourcePrefix(String prefix) {
      this.resourcePrefix = Objects.requireNonNull(prefix, "resourcePrefix");
      return this;
    }

    /** The owner label of every lease; the client's own label when not set. */
    public Builder owner(String owner) {
      this.owner = owner;
      return this;
    }

    /**
     * Renews each held lock to its {@code lockAtMostFor} about every third of it while the task
     * runs, so a long task keeps its lock and only a paused or dead instance loses it after {@code
     * lockAtMostFor} (ShedLock's {@code KeepAliveLockProvider} does the same for 30 s and longer).
     * Off by default: then, as ShedLock expects, a lock ends at its {@code lockAtMostFor} unless
     * extended. {@link #close()} the provider to stop its renewal thread.
     */
    public Builder keepAlive(boolean keepAlive) {
      this.keepAlive = keepAlive;
      return this;
    }

    /**
     * Runs on every granted lock before the task, e.g. {@code lock ->
     * fence.advance(lock.resource(), lock.token())}, so the store refuses the previous holder from
     * the moment this one starts. If it throws, the lock is released and the run skipped. None by
     * default.
     */
    public Builder acquireFence(AcquireFence acquireFence) {
      this.acquireFence = acquireFence;
      return this;
    }

    public FencekeeperLockProvider build() {
      return new FencekeeperLockProvider(this);
    }
  }
}
