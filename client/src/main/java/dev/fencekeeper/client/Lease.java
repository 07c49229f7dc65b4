package dev.fencekeeper.client;

import dev.fencekeeper.proto.ResultCode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A held lease on one resource, identified by its fencing token. Renews itself in the background about
 * every TTL/3 and keeps a conservative local deadline: measured from when the acquire (or the latest
 * successful renewal) was <em>sent</em>, so the local view can only end before the cluster's, never
 * after. {@link #close()} releases it.
 *
 * <p>The hazard this exists for: a worker pauses (GC, stall, SIGSTOP) past its lease, another takes
 * over, and the first wakes up believing it still owns the resource. {@link #isValid()} cannot protect
 * it — it may be true one instruction before the pause. The token can: every {@link #write} carries it
 * and the cluster rejects it once a newer token exists.
 *
 * <pre>
 *   time  worker A                         worker B
 *   T1    acquires, token 41
 *   T3    paused; lease expires
 *   T4    still paused                      acquires, token 42
 *   T5                                      writes with 42: accepted
 *   T6    resumes, writes with 41: STALE_TOKEN (41 &lt; 42), B's value kept
 * </pre>
 *
 * <p>A leader change is not a loss: renewals are retried through the new leader, whose takeover grace
 * keeps the lease alive meanwhile. The lease is lost only when the cluster says so (LEASE_LOST) or the
 * local deadline passes without a successful renewal.
 */
public final class Lease implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Lease.class);

  /** Why a lease was lost. */
  public enum LossReason {
    /** The cluster answered that this token is no longer the live lease (expired, superseded). */
    LEASE_LOST,
    /** No renewal succeeded before the local deadline; the cluster has (or soon will have) expired it. */
    DEADLINE_PASSED
  }

  private final FencingClient client;
  private final String resource;
  private final String owner;
  private final Duration ttl;
  private final long token;
  private final List<Consumer<LossReason>> listeners = new ArrayList<>();
  private long deadlineNanos;
  private LossReason lost;
  private boolean closed;
  private ScheduledFuture<?> renewal;
  private ScheduledFuture<?> deadlineCheck;

  Lease(FencingClient client, String resource, String owner, Duration ttl, long token, long sentNanos) {
    this.client = client;
    this.resource = resource;
    this.owner = owner;
    this.ttl = ttl;
    this.token = token;
    this.deadlineNanos = sentNanos + ttl.toNanos();
    scheduleRenewal(renewalPeriodMs());
  }

  public String resource() {
    return resource;
  }

  public long token() {
    return token;
  }

  public String owner() {
    return owner;
  }

  public Duration ttl() {
    return ttl;
  }

  /**
   * True while the lease is neither lost nor past its local deadline. Advisory: fence every protected
   * write with {@link #token()} instead of trusting this.
   */
  public synchronized boolean isValid() {
    return lost == null && !closed && System.nanoTime() < deadlineNanos;
  }

  /** Time left before the conservative local deadline; zero once passed. */
  public synchronized Duration remaining() {
    return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
  }

  /**
   * Calls {@code listener} exactly once when this lease is lost (immediately if it already was). Not
   * called after a voluntary {@link #close()}.
   */
  public void onLost(Consumer<LossReason> listener) {
    LossReason already;
    synchronized (this) {
      already = lost;
      if (already == null) {
        listeners.add(listener);
        return;
      }
    }
    listener.accept(already);
  }

  // -----------------------------------------------------------------------------------------------
  // Fenced writes.

  public WriteResult write(String key, byte[] value) {
    return FencingClient.join(writeAsync(List.of(KeyChange.put(key, value)), null));
  }

  public WriteResult write(String key, String value) {
    return write(key, value.getBytes(StandardCharsets.UTF_8));
  }

  /** Writes every entry of {@code values} atomically. */
  public WriteResult write(Map<String, byte[]> values) {
    List<KeyChange> changes = new ArrayList<>(values.size());
    values.forEach((k, v) -> changes.add(KeyChange.put(k, v)));
    return FencingClient.join(writeAsync(changes, null));
  }

  public WriteResult delete(String key) {
    return FencingClient.join(writeAsync(List.of(KeyChange.delete(key)), null));
  }

  /** See {@link FencingClient#write(String, long, List, String)}. */
  public WriteResult write(List<KeyChange> changes, String requestId) {
    return FencingClient.join(writeAsync(changes, requestId));
  }

  public CompletableFuture<WriteResult> writeAsync(List<KeyChange> changes, String requestId) {
    return client.writeAsync(resource, token, changes, requestId);
  }

  public CompletableFuture<WriteResult> writeAsync(String key, byte[] value) {
    return writeAsync(List.of(KeyChange.put(key, value)), null);
  }

  // -----------------------------------------------------------------------------------------------
  // Renewal and loss.

  /** Renews now rather than waiting for the background renewal. */
  public Result renew() {
    return FencingClient.join(renewAsync());
  }

  public CompletableFuture<Result> renewAsync() {
    long sentNanos = System.nanoTime();
    return client
        .renewAsync(resource, token, null)
        .thenApply(
            result -> {
              onRenewal(result, sentNanos);
              return result;
            });
  }

  private long renewalPeriodMs() {
    return Math.max(1, ttl.toMillis() / 3);
  }

  /**
   * After a renewal that did not succeed (an election, a slow node) the next attempt comes sooner than the
   * regular period: waiting a full third of the TTL again would leave only one more chance before expiry.
   */
  private long retryAfterFailedRenewalMs() {
    return Math.max(1, Math.min(renewalPeriodMs(), Math.max(50, ttl.toMillis() / 10)));
  }

  private void scheduleRenewal(long delayMs) {
    synchronized (this) {
      if (closed || lost != null) {
        return;
      }
      renewal =
          client
              .scheduler()
              .schedule(
                  () ->
                      renewAsync()
                          .whenComplete(
                              (result, failure) ->
                                  scheduleRenewal(
                                      result != null && result.code() == ResultCode.RENEWED
                                          ? renewalPeriodMs()
                                          : retryAfterFailedRenewalMs())),
                  delayMs,
                  TimeUnit.MILLISECONDS);
      scheduleDeadlineCheck();
    }
  }

  private synchronized void scheduleDeadlineCheck() {
    if (deadlineCheck != null) {
      deadlineCheck.cancel(false);
    }
    long delayNanos = Math.max(0, deadlineNanos - System.nanoTime());
    deadlineCheck =
        client.scheduler().schedule(this::checkDeadline, delayNanos, TimeUnit.NANOSECONDS);
  }

  private void checkDeadline() {
    boolean passed;
    synchronized (this) {
      passed = System.nanoTime() >= deadlineNanos;
    }
    if (passed) {
      markLost(LossReason.DEADLINE_PASSED);
    }
  }

  private void onRenewal(Result result, long sentNanos) {
    if (result.code() == ResultCode.RENEWED) {
      synchronized (this) {
        // Still measured from the send time: the cluster's deadline is at least this late.
        deadlineNanos = Math.max(deadlineNanos, sentNanos + Duration.ofMillis(result.ttlMs()).toNanos());
      }
    } else if (result.code() == ResultCode.LEASE_LOST) {
      markLost(LossReason.LEASE_LOST);
    } else {
      // UNAVAILABLE (an election, a slow node) is not a loss; the deadline check decides.
      LOG.debug("Renewal of {} token {} did not succeed: {}", resource, token, result);
    }
  }

  private void markLost(LossReason reason) {
    List<Consumer<LossReason>> toNotify;
    synchronized (this) {
      if (lost != null || closed) {
        return;
      }
      lost = reason;
      cancelTimers();
      toNotify = List.copyOf(listeners);
      listeners.clear();
    }
    LOG.info("Lease on {} (token {}) lost: {}", resource, token, reason);
    client.metrics().leaseLost();
    for (Consumer<LossReason> listener : toNotify) {
      try {
        listener.accept(reason);
      } catch (RuntimeException e) {
        LOG.warn("Lease-lost listener failed", e);
      }
    }
  }

  private void cancelTimers() {
    if (renewal != null) {
      renewal.cancel(false);
    }
    if (deadlineCheck != null) {
      deadlineCheck.cancel(false);
    }
  }

  /** Stops renewing without releasing; the lease then ends by expiry. */
  public synchronized void abandon() {
    closed = true;
    cancelTimers();
  }

  /** Stops renewing and releases the lease. Safe to call more than once. */
  @Override
  public void close() {
    boolean release;
    synchronized (this) {
      release = !closed && lost == null;
      closed = true;
      cancelTimers();
    }
    if (release) {
      Result result = client.release(resource, token);
      if (result.code() != ResultCode.RELEASED) {
        LOG.debug("Release of {} token {} answered {}", resource, token, result);
      }
    }
  }

  @Override
  public String toString() {
    return "Lease{" + resource + ", token=" + token + ", owner=" + owner + "}";
  }
}
