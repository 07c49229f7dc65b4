package dev.fencekeeper.spring.integration;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.LeaseHeldException;
import dev.fencekeeper.client.ResultCode;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.util.ClassUtils;

/**
 * A Spring Integration {@code LockRegistry} on fencekeeper: {@link #obtain} returns one {@link
 * FencedLock} per key, a lease on resource {@code prefix + key}. Within this JVM the lock is
 * reentrant and owned by a thread, like {@link ReentrantLock}; across instances only one holds the
 * lease. The lease renews itself while held, so the TTL bounds only how long a crashed or paused
 * holder keeps others out.
 *
 * <p>{@code unlock()} after the lease was lost (expired during a pause, revoked) releases the lock
 * here and throws {@link IllegalStateException}: whatever the holder wrote after the loss was not
 * protected, unless it was fenced with {@link FencedLock#token()}.
 *
 * <p>Built with a {@link LeaseFence}, each grant raises the store's fence to the new token before
 * the lock is handed over (fence at acquire).
 *
 * <p>Works with Spring Integration 6.5 and 7. The registry implements the raw {@code
 * ExpirableLockRegistry}: the interface is generic on 7 and not on 6.5, and a class file naming a
 * type argument for it would fail reflection on 6.5. {@link #obtain} still returns {@link
 * FencedLock}; on 7 each lock is also a {@link DistributedLock}.
 */
@SuppressWarnings("rawtypes")
public class FencekeeperLockRegistry implements ExpirableLockRegistry {
  // Spring Integration 7 has DistributedLock; 6.5 does not, and must never load a class naming it.
  private static final boolean DISTRIBUTED_LOCK =
      ClassUtils.isPresent(
          "org.springframework.integration.support.locks.DistributedLock",
          FencekeeperLockRegistry.class.getClassLoader());

  // A blocking lock() waits in the cluster's queue in slices this long, re-queueing in between.
  private static final Duration WAIT_SLICE = Duration.ofSeconds(30);
  private static final long UNAVAILABLE_BACKOFF_MS = 200;

  private final FencingClient client;
  private final String resourcePrefix;
  private final Duration ttl;
  private final Map<String, LeaseLock> locks = new ConcurrentHashMap<>();
  private static final LeaseFence NO_FENCE = lease -> {};

  private final LeaseFence fence;
  private final LongAdder unavailable = new LongAdder();
  private final LongAdder fenceFailures = new LongAdder();

  public FencekeeperLockRegistry(FencingClient client, String resourcePrefix, Duration ttl) {
    this(client, resourcePrefix, ttl, NO_FENCE);
  }

  /**
   * As {@link #FencekeeperLockRegistry(FencingClient, String, Duration)}, with {@code fence} run on
   * every grant before the lock is handed over (see {@link LeaseFence}).
   */
  public FencekeeperLockRegistry(
      FencingClient client, String resourcePrefix, Duration ttl, LeaseFence fence) {
    this.client = Objects.requireNonNull(client, "client");
    this.resourcePrefix = Objects.requireNonNull(resourcePrefix, "resourcePrefix");
    if (ttl == null || ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive, was " + ttl);
    }
    this.ttl = ttl;
    this.fence = Objects.requireNonNull(fence, "fence");
  }

  public FencekeeperLockRegistry(FencingClient client) {
    this(client, "", Duration.ofSeconds(30));
  }

  @Override
  public FencedLock obtain(Object lockKey) {
    Objects.requireNonNull(lockKey, "lockKey");
    String resource = resourcePrefix + lockKey;
    return locks.computeIfAbsent(resource, this::newLock).touch();
  }

  /**
   * How many attempts to take a lock found no node of the cluster answering (each then waits a
   * moment and tries again until its caller's deadline), since the registry was built.
   */
  public long unavailableAttempts() {
    return unavailable.sum();
  }

  /**
   * How many grants were given back because the {@link LeaseFence} failed (the lock attempt threw),
   * since the registry was built.
   */
  public long fenceFailures() {
    return fenceFailures.sum();
  }

  /** Forgets locks nobody holds and nobody obtained for {@code age} milliseconds. */
  @Override
  public void expireUnusedOlderThan(long age) {
    long now = System.currentTimeMillis();
    locks.values().removeIf(l -> !l.local.isLocked() && now - l.lastUsedMs > age);
  }

  private LeaseLock newLock(String resource) {
    return DISTRIBUTED_LOCK ? Integration7.newLock(this, resource) : new LeaseLock(resource);
  }

  /**
   * Spring Integration 7 only. Its own class, so that verifying the registry never needs {@link
   * DistributedLock} (the verifier loads the types a method's branches merge).
   */
  private static final class Integration7 {
    static LeaseLock newLock(FencekeeperLockRegistry registry, String resource) {
      return registry.new DistributedLeaseLock(resource);
    }
  }

  /** On Spring Integration 7: the same lock, also a {@link DistributedLock}. */
  private final class DistributedLeaseLock extends LeaseLock implements DistributedLock {
    DistributedLeaseLock(String resource) {
      super(resource);
    }
  }

  private class LeaseLock implements FencedLock {
    private final String resource;
    private final ReentrantLock local = new ReentrantLock();
    private volatile long lastUsedMs = System.currentTimeMillis();
    // Set and cleared by the thread holding `local`.
    private Lease lease;
    private volatile Lease.LossReason lost;

    LeaseLock(String resource) {
      this.resource = resource;
    }

    LeaseLock touch() {
      lastUsedMs = System.currentTimeMillis();
      return this;
    }

    @Override
    public String resource() {
      return resource;
    }

    @Override
    public long token() {
      return lease().token();
    }

    @Override
    public Lease lease() {
      if (!local.isHeldByCurrentThread() || lease == null) {
        throw new IllegalStateException("this thread does not hold the lock on '" + resource + "'");
      }
      return lease;
    }

    @Override
    public void lock() {
      lock(ttl);
    }

    @Override
    public void lock(Duration leaseTtl) {
      local.lock();
      if (local.getHoldCount() > 1) {
        return;
      }
      try {
        while (true) {
          if (tryTake(leaseTtl, WAIT_SLICE)) {
            return;
          }
        }
      } catch (RuntimeException e) {
        local.unlock();
        throw e;
      }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
      local.lockInterruptibly();
      if (local.getHoldCount() > 1) {
        return;
      }
      try {
        while (true) {
          if (Thread.interrupted()) {
            throw new InterruptedException("interrupted while waiting for '" + resource + "'");
          }
          if (tryTake(ttl, Duration.ofSeconds(1))) {
            return;
          }
        }
      } catch (RuntimeException | InterruptedException e) {
        local.unlock();
        throw e;
      }
    }

    @Override
    public boolean tryLock() {
      if (!local.tryLock()) {
        return false;
      }
      if (local.getHoldCount() > 1) {
        return true;
      }
      try {
        if (tryTake(ttl, Duration.ZERO)) {
          return true;
        }
      } catch (RuntimeException e) {
        local.unlock();
        throw e;
      }
      local.unlock();
      return false;
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
      return tryLock(Duration.ofNanos(unit.toNanos(time)), ttl);
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration leaseTtl) throws InterruptedException {
      long deadline = System.nanoTime() + waitTime.toNanos();
      if (!local.tryLock(waitTime.toNanos(), TimeUnit.NANOSECONDS)) {
        return false;
      }
      if (local.getHoldCount() > 1) {
        return true;
      }
      try {
        do {
          Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
          if (tryTake(leaseTtl, left)) {
            return true;
          }
        } while (System.nanoTime() < deadline);
      } catch (RuntimeException e) {
        local.unlock();
        throw e;
      }
      local.unlock();
      return false;
    }

    /**
     * One attempt at the lease, waiting in the cluster's queue up to {@code wait}; false when it
     * stays held. When no node answers, waits a moment and reports false so the caller's own
     * deadline decides.
     */
    private boolean tryTake(Duration leaseTtl, Duration wait) {
      Lease taken;
      try {
        taken =
            wait.isZero()
                ? client.acquire(resource, leaseTtl)
                : client.acquire(resource, leaseTtl, wait);
      } catch (LeaseHeldException e) {
        return false;
      } catch (FencingException e) {
        if (e.code() == ResultCode.UNAVAILABLE) {
          unavailable.increment();
        }
        if (e.code() == ResultCode.UNAVAILABLE || e.code() == ResultCode.LOCK_DELAYED) {
          sleepQuietly(Math.min(UNAVAILABLE_BACKOFF_MS, Math.max(1, wait.toMillis())));
          return false;
        }
        throw e;
      }
      raiseFence(taken);
      lost = null;
      taken.onLost(reason -> lost = reason);
      lease = taken;
      return true;
    }

    /** Runs the fence on a new grant; if it fails, gives the lease back and throws. */
    private void raiseFence(Lease taken) {
      try {
        fence.advance(taken);
      } catch (Exception e) {
        fenceFailures.increment();
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        try {
          taken.close();
        } catch (RuntimeException closing) {
          e.addSuppressed(closing);
        }
        throw new IllegalStateException(
            "the lock on '"
                + resource
                + "' was granted (token "
                + taken.token()
                + ") but its fence could not be raised, so the lease was given back: "
                + e.getMessage(),
            e);
      }
    }

    @Override
    public void unlock() {
      if (!local.isHeldByCurrentThread()) {
        throw new IllegalMonitorStateException(
            "this thread does not hold the lock on '" + resource + "'");
      }
      if (local.getHoldCount() > 1) {
        local.unlock();
        return;
      }
      Lease held = lease;
      lease = null;
      Lease.LossReason lossReason = lost;
      try {
        held.close();
      } finally {
        lastUsedMs = System.currentTimeMillis();
        local.unlock();
      }
      if (lossReason != null) {
        throw new IllegalStateException(
            "the lease on '"
                + resource
                + "' (token "
                + held.token()
                + ") was lost ("
                + lossReason
                + ") before unlock: work done after the loss was protected only where it was fenced"
                + " with the token");
      }
    }

    @Override
    public Condition newCondition() {
      throw new UnsupportedOperationException("a fencekeeper lock has no conditions");
    }

    @Override
    public String toString() {
      Lease l = lease;
      return "FencedLock{" + resource + (l == null ? ", unlocked" : ", token=" + l.token()) + "}";
    }
  }

  private static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "FencekeeperLockRegistry{prefix='" + resourcePrefix + "', ttl=" + ttl + "}";
  }
}
