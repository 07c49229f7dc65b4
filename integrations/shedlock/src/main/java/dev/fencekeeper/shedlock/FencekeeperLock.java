package dev.fencekeeper.shedlock;

import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One granted ShedLock lock: a fencekeeper lease and its token. ShedLock's own rules apply — once
 * unlocked or extended, this object is spent (both throw {@link IllegalStateException}); an
 * extension returns a new lock on the same lease, with the same token.
 */
public final class FencekeeperLock extends AbstractSimpleLock {
  private static final Logger LOG = LoggerFactory.getLogger(FencekeeperLock.class);

  private final FencekeeperLockProvider provider;
  private final LockToken.Binding binding;
  // When the acquire (or extension) that set this lock's deadlines was sent; lockAtLeastFor counts
  // from here.
  private final long startNanos;
  private final ScheduledFuture<?> keepAlive;

  FencekeeperLock(
      FencekeeperLockProvider provider,
      LockConfiguration config,
      LockToken.Binding binding,
      long startNanos) {
    super(config);
    this.provider = provider;
    this.binding = binding;
    this.startNanos = startNanos;
    ScheduledExecutorService scheduler = provider.keepAlive();
    long periodMs = Math.max(1, config.getLockAtMostFor().toMillis() / 3);
    this.keepAlive =
        scheduler == null
            ? null
            : scheduler.scheduleWithFixedDelay(
                this::keepAlive, periodMs, periodMs, TimeUnit.MILLISECONDS);
  }

  /** One keep-alive renewal, to a full {@code lockAtMostFor} from when it was sent. */
  private void keepAlive() {
    if (binding.ended) {
      return;
    }
    long sentNanos = System.nanoTime();
    Result result =
        provider.client().renew(resource(), token(), lockConfiguration.getLockAtMostFor());
    if (result.code() == ResultCode.RENEWED) {
      binding.deadlineNanos = sentNanos + lockConfiguration.getLockAtMostFor().toNanos();
    } else if (result.code() == ResultCode.LEASE_LOST && !binding.ended) {
      LOG.warn(
          "Lock {} (resource {}, token {}) was lost while its task ran: {}",
          lockConfiguration.getName(),
          resource(),
          token(),
          result);
      binding.end();
      stopKeepAlive();
    } else {
      // No node answered in time (an election): the next round tries again before the deadline.
      LOG.debug(
          "Keep-alive of {} (resource {}, token {}) answered {}",
          lockConfiguration.getName(),
          resource(),
          token(),
          result);
    }
  }

  private void stopKeepAlive() {
    if (keepAlive != null) {
      keepAlive.cancel(false);
    }
  }

  public String resource() {
    return binding.token.resource();
  }

  public long token() {
    return binding.token.token();
  }

  /**
   * The lock's name, resource and token, as {@link LockToken#current()} returns them to the task.
   */
  public LockToken lockToken() {
    return binding.token;
  }

  @Override
  protected void doUnlock() {
    stopKeepAlive();
    binding.end();
    Duration remaining =
        lockConfiguration.getLockAtLeastFor().minusNanos(System.nanoTime() - startNanos);
    Result result;
    if (remaining.compareTo(Duration.ZERO) > 0) {
      Duration ttl = remaining.compareTo(provider.minTtl()) < 0 ? provider.minTtl() : remaining;
      result = provider.client().renew(resource(), token(), ttl);
      if (result.code() == ResultCode.RENEWED) {
        return;
      }
    } else {
      result = provider.client().release(resource(), token());
      if (result.code() == ResultCode.RELEASED) {
        return;
      }
    }
    // Lost already (LEASE_LOST, NOT_HOLDER) needs nothing; if no node answered, the lease ends at
    // its TTL.
    LOG.debug(
        "Unlock of {} (resource {}, token {}) answered {}",
        lockConfiguration.getName(),
        resource(),
        token(),
        result);
  }

  @Override
  protected Optional<SimpleLock> doExtend(LockConfiguration newConfig) {
    stopKeepAlive();
    long sentNanos = System.nanoTime();
    Result result = provider.client().renew(resource(), token(), newConfig.getLockAtMostFor());
    if (result.code() != ResultCode.RENEWED) {
      LOG.debug(
          "Extension of {} (resource {}, token {}) answered {}",
          lockConfiguration.getName(),
          resource(),
          token(),
          result);
      // ShedLock spends this lock whatever the answer, so the task no longer holds one.
      binding.end();
      return Optional.empty();
    }
    binding.deadlineNanos = sentNanos + newConfig.getLockAtMostFor().toNanos();
    return Optional.of(new FencekeeperLock(provider, newConfig, binding, sentNanos));
  }

  @Override
  public String toString() {
    return "FencekeeperLock{"
        + lockConfiguration.getName()
        + ", resource="
        + resource()
        + ", token="
        + token()
        + "}";
  }
}
