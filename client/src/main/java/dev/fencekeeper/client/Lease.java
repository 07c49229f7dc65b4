package dev.fencekeeper.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A held lease on one resource, identified by its fencing token. Renewed in the background about
 * every TTL/3 by the client's session, one keep-alive for all its leases, and keeps a conservative
 * local deadline: measured from when the acquire (or the latest successful renewal or keep-alive)
 * was <em>sent</em>, so the local view can only end before the cluster's, never after. {@link
 * #close()} releases it.
 *
 * <p>The hazard this exists for: a worker pauses (GC, stall, SIGSTOP) past its lease, another takes
 * over, and the first wakes up believing it still owns the resource. {@link #isValid()} cannot
 * protect it — it may be true one instruction before the pause. The token can: every {@link #write}
 * carries it and the cluster rejects it once a newer token exists.
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
 * <p>A leader change is not a loss: renewals are retried through the new leader, whose takeover
 * grace keeps the lease alive meanwhile. The lease is lost only when the cluster says so or the
 * local deadline passes without a successful renewal. The cluster says so in two ways: the lease's
 * end (a revoke, an expiry, a release by someone holding the token) reaches it within about a
 * second of its commit, on the client's session stream; and a renewal answered {@code LEASE_LOST}
 * (on the session, a keep-alive that renewed fewer leases than the client holds, after which each
 * is checked).
 *
 * <p>Listeners ({@link #onLost}, {@link #onStateChange}) run on an executor, never on the thread
 * that renews this or any other lease, so a slow or throwing listener delays no renewal.
 */
public final class Lease implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Lease.class);

  /** Why a lease was lost. */
  public enum LossReason {
    /**
     * The cluster said this token is no longer the live lease: it expired, was revoked or released,
     * or a newer lease was granted.
     */
    LEASE_LOST,
    /**
     * No renewal succeeded before the local deadline; the cluster has (or soon will have) expired
     * it.
     */
    DEADLINE_PASSED
  }

  /** Where a lease stands, as this client knows it. */
  public enum State {
    /** Renewing normally. */
    HELD,
    /**
     * Still valid, but in danger: the latest renewal did not succeed (no node answered, an
     * overloaded or slow leader) or less than a third of the TTL is left without a successful
     * renewal. Back to {@link #HELD} after the next successful renewal; to {@link #LOST} if none
     * comes in time. Like Curator's SUSPENDED: stop starting work that needs the lease, and fence
     * what is running with its token.
     */
    AT_RISK,
    /** Lost; {@link #onLost} listeners have been told why. Final. */
    LOST,
    /** Closed or abandoned by its holder. Final; listeners are not told of it. */
    CLOSED
  }

  private record Registered<T>(Executor executor, Consumer<T> listener) {}

  private final FencingClient client;
  private final String resource;
  private final String owner;
  private final Duration ttl;
  private final long token;
  // When the grant's answer reached this client: a keep-alive sent after it renews the lease.
  private final long grantAnsweredNanos = System.nanoTime();
  private final List<Registered<LossReason>> lossListeners = new ArrayList<>();
  private final List<Registered<State>> stateListeners = new ArrayList<>();
  private long deadlineNanos;
  private State state = State.HELD;
  private LossReason lost;
  private CompletableFuture<Void> closing;
  private ScheduledFuture<?> deadlineCheck;
  private ScheduledFuture<?> atRiskCheck;

  Lease(
      FencingClient client,
      String resource,
      String owner,
      Duration ttl,
      long token,
      long sentNanos) {
    this.client = client;
    this.resource = resource;
    this.owner = owner;
    this.ttl = ttl;
    this.token = token;
    this.deadlineNanos = sentNanos + localTtlNanos(ttl);
    scheduleDeadlineChecks();
  }

  /**
   * How long after a send this client counts a TTL to last: the TTL less 1,000 ppm of it. The
   * cluster measures the TTL on its time line, which may run up to 500 ppm fast while it slews
   * toward wall time, on a leader whose monotonic clock NTP may slew 500 ppm against this one; the
   * margin keeps the local deadline before the cluster's.
   */
  static long localTtlNanos(Duration ttl) {
    long nanos = ttl.toNanos();
    return nanos - nanos / 1_000;
  }

  long grantAnsweredNanos() {
    return grantAnsweredNanos;
  }

  /**
   * A session keep-alive sent at {@code sentNanos}, after this lease's grant was answered, renewed
   * it: the cluster logged that renewal after the send, so its deadline is at least this late.
   */
  void renewedAt(long sentNanos) {
    synchronized (this) {
      if (state == State.LOST || state == State.CLOSED) {
        return;
      }
      long renewed = sentNanos + localTtlNanos(ttl);
      if (renewed - deadlineNanos > 0) {
        deadlineNanos = renewed;
        scheduleDeadlineChecks();
      }
    }
    changeState(State.AT_RISK, State.HELD);
  }

  /** A session keep-alive did not renew this lease (no answer, a leader change, overload). */
  void renewalMissed() {
    boolean near;
    synchronized (this) {
      near = deadlineNanos - System.nanoTime() <= atRiskMarginNanos();
    }
    if (near) {
      changeState(State.HELD, State.AT_RISK);
    }
  }

  /** The cluster ended this lease: its end event arrived, or a check found it gone. */
  void endedOnCluster(dev.fencekeeper.proto.LeaseEvent event) {
    if (event != null) {
      LOG.debug(
          "Lease on {} (token {}) ended by event {} at index {}",
          resource,
          token,
          event.getType(),
          event.getIndex());
    }
    markLost(LossReason.LEASE_LOST, true);
  }

  /** The resource this lease is on. */
  public String resource() {
    return resource;
  }

  /**
   * The fencing token: carried by every {@link #write}; the cluster rejects it once a newer one
   * exists.
   */
  public long token() {
    return token;
  }

  /** The owner label the lease was acquired with (diagnostics only). */
  public String owner() {
    return owner;
  }

  /** The TTL asked for; each renewal extends the lease by this much. */
  public Duration ttl() {
    return ttl;
  }

  /**
   * True while the lease is neither lost, closed nor past its local deadline; false as soon as this
   * client learns of a loss. Advisory: fence every protected write with {@link #token()} instead of
   * trusting this.
   */
  public synchronized boolean isValid() {
    return (state == State.HELD || state == State.AT_RISK) && System.nanoTime() < deadlineNanos;
  }

  /** Where the lease stands now. */
  public synchronized State state() {
    return state;
  }

  /** Time left before the conservative local deadline; zero once passed. */
  public synchronized Duration remaining() {
    return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
  }

  /**
   * Calls {@code listener} exactly once when this lease is lost, on the client's callback executor;
   * if it already was lost, at once on the calling thread. Not called after a voluntary {@link
   * #close()} or {@link #abandon()}.
   */
  public void onLost(Consumer<LossReason> listener) {
    LossReason already;
    synchronized (this) {
      already = lost;
      if (already == null) {
        lossListeners.add(new Registered<>(client.calls().callbackExecutor(), listener));
        return;
      }
    }
    listener.accept(already);
  }

  /**
   * Calls {@code listener} exactly once, on {@code executor}, when this lease is lost (at once, on
   * {@code executor}, if it already was). Not called after a voluntary {@link #close()} or {@link
   * #abandon()}.
   */
  public void onLost(Executor executor, Consumer<LossReason> listener) {
    LossReason already;
    synchronized (this) {
      already = lost;
      if (already == null) {
        lossListeners.add(new Registered<>(executor, listener));
        return;
      }
    }
    dispatch(List.of(new Registered<>(executor, listener)), already);
  }

  /**
   * Calls {@code listener} on {@code executor} with every later change of {@link #state()} to
   * {@link State#AT_RISK}, back to {@link State#HELD}, or to {@link State#LOST}, in order.
   */
  public synchronized void onStateChange(Executor executor, Consumer<State> listener) {
    stateListeners.add(new Registered<>(executor, listener));
  }

  // -----------------------------------------------------------------------------------------------
  // Fenced writes.

  /** Writes one key fenced by this lease's token. */
  public WriteResult write(String key, byte[] value) {
    return ClusterCalls.join(writeAsync(List.of(KeyChange.put(key, value)), null));
  }

  /** Writes one key (UTF-8) fenced by this lease's token. */
  public WriteResult write(String key, String value) {
    return write(key, value.getBytes(StandardCharsets.UTF_8));
  }

  /** Writes every entry of {@code values} atomically. */
  public WriteResult write(Map<String, byte[]> values) {
    List<KeyChange> changes = new ArrayList<>(values.size());
    values.forEach((k, v) -> changes.add(KeyChange.put(k, v)));
    return ClusterCalls.join(writeAsync(changes, null));
  }

  /** Deletes one key, fenced by this lease's token. */
  public WriteResult delete(String key) {
    return ClusterCalls.join(writeAsync(List.of(KeyChange.delete(key)), null));
  }

  /** See {@link FencingClient#write(String, long, List, String)}. */
  public WriteResult write(List<KeyChange> changes, String requestId) {
    return ClusterCalls.join(writeAsync(changes, requestId));
  }

  /** The asynchronous form of {@link #write(List, String)}. */
  public CompletableFuture<WriteResult> writeAsync(List<KeyChange> changes, String requestId) {
    return client.writeAsync(resource, token, changes, requestId);
  }

  /** The asynchronous form of {@link #write(String, byte[])}. */
  public CompletableFuture<WriteResult> writeAsync(String key, byte[] value) {
    return writeAsync(List.of(KeyChange.put(key, value)), null);
  }

  // -----------------------------------------------------------------------------------------------
  // Renewal and loss.

  /** Renews now rather than waiting for the background renewal. */
  public Result renew() {
    return ClusterCalls.join(renewAsync());
  }

  /** The asynchronous form of {@link #renew()}. */
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

  private synchronized void scheduleDeadlineChecks() {
    if (deadlineCheck != null) {
      deadlineCheck.cancel(false);
    }
    if (atRiskCheck != null) {
      atRiskCheck.cancel(false);
    }
    long delayNanos = Math.max(0, deadlineNanos - System.nanoTime());
    deadlineCheck =
        client.calls().scheduler().schedule(this::checkDeadline, delayNanos, TimeUnit.NANOSECONDS);
    atRiskCheck =
        client
            .calls()
            .scheduler()
            .schedule(
                this::checkDeadlineNear,
                Math.max(0, delayNanos - atRiskMarginNanos()),
                TimeUnit.NANOSECONDS);
  }

  private long atRiskMarginNanos() {
    return ttl.toNanos() / 3;
  }

  private void checkDeadline() {
    boolean passed;
    synchronized (this) {
      passed = System.nanoTime() >= deadlineNanos;
    }
    if (passed) {
      markLost(LossReason.DEADLINE_PASSED, false);
    }
  }

  private void checkDeadlineNear() {
    boolean near;
    synchronized (this) {
      near = deadlineNanos - System.nanoTime() <= atRiskMarginNanos();
    }
    if (near) {
      changeState(State.HELD, State.AT_RISK);
    }
  }

  private void onRenewal(Result result, long sentNanos) {
    if (result.code() == ResultCode.RENEWED) {
      synchronized (this) {
        // Still measured from the send time: the cluster's deadline is at least this late.
        deadlineNanos =
            Math.max(deadlineNanos, sentNanos + localTtlNanos(Duration.ofMillis(result.ttlMs())));
      }
      changeState(State.AT_RISK, State.HELD);
    } else if (result.code() == ResultCode.LEASE_LOST) {
      markLost(LossReason.LEASE_LOST, true);
    } else {
      // UNAVAILABLE (an election, a slow node) is not a loss; the deadline check decides.
      LOG.debug("Renewal of {} token {} did not succeed: {}", resource, token, result);
      changeState(State.HELD, State.AT_RISK);
    }
  }

  private void changeState(State from, State to) {
    List<Registered<State>> toNotify;
    synchronized (this) {
      if (state != from) {
        return;
      }
      state = to;
      toNotify = List.copyOf(stateListeners);
    }
    if (to == State.AT_RISK) {
      LOG.info(
          "Lease on {} (token {}) at risk: {} left without a successful renewal",
          resource,
          token,
          remaining());
    }
    dispatch(toNotify, to);
  }

  private void markLost(LossReason reason, boolean endedOnCluster) {
    List<Registered<LossReason>> lossToNotify;
    List<Registered<State>> stateToNotify;
    synchronized (this) {
      if (state == State.LOST || state == State.CLOSED) {
        return;
      }
      lost = reason;
      state = State.LOST;
      cancelTimers();
      lossToNotify = List.copyOf(lossListeners);
      lossListeners.clear();
      stateToNotify = List.copyOf(stateListeners);
    }
    client.forget(this, endedOnCluster);
    LOG.info("Lease on {} (token {}) lost: {}", resource, token, reason);
    client.metrics().leaseLost();
    dispatch(lossToNotify, reason);
    dispatch(stateToNotify, State.LOST);
  }

  /**
   * Runs each listener on its executor, each failure contained, so none can delay another or a
   * renewal.
   */
  private <T> void dispatch(List<Registered<T>> listeners, T value) {
    for (Registered<T> r : listeners) {
      try {
        r.executor()
            .execute(
                () -> {
                  try {
                    r.listener().accept(value);
                  } catch (RuntimeException e) {
                    LOG.warn(
                        "Listener of the lease on {} (token {}) failed on {}",
                        resource,
                        token,
                        value,
                        e);
                  }
                });
      } catch (RejectedExecutionException e) {
        LOG.warn(
            "Listener of the lease on {} (token {}) not told of {}: its executor refused the task",
            resource,
            token,
            value);
      }
    }
  }

  private void cancelTimers() {
    if (deadlineCheck != null) {
      deadlineCheck.cancel(false);
    }
    if (atRiskCheck != null) {
      atRiskCheck.cancel(false);
    }
  }

  /** Stops renewing without releasing; the lease then ends by expiry. */
  public void abandon() {
    synchronized (this) {
      if (state == State.LOST || state == State.CLOSED) {
        return;
      }
      state = State.CLOSED;
      cancelTimers();
    }
    client.forget(this, false);
  }

  /**
   * Stops renewing and releases the lease; completes when the cluster has answered the release (at
   * once if the lease was already lost, closed or abandoned). Never completes exceptionally: a
   * release that fails (no node answered) leaves the lease to expire by its TTL, and is logged.
   */
  public CompletableFuture<Void> closeAsync() {
    boolean release;
    CompletableFuture<Void> done;
    synchronized (this) {
      if (closing != null) {
        return closing;
      }
      release = state == State.HELD || state == State.AT_RISK;
      if (release) {
        state = State.CLOSED;
      }
      cancelTimers();
      closing =
          done = release ? new CompletableFuture<>() : CompletableFuture.completedFuture(null);
    }
    if (release) {
      client.forget(this, false);
      client
          .releaseAsync(resource, token)
          .whenComplete(
              (result, error) -> {
                if (error != null || result.code() != ResultCode.RELEASED) {
                  LOG.debug(
                      "Release of {} token {} answered {}",
                      resource,
                      token,
                      error != null ? error : result);
                }
                done.complete(null);
              });
    }
    return done;
  }

  /** Stops renewing and releases the lease, waiting for the answer. Safe to call more than once. */
  @Override
  public void close() {
    ClusterCalls.join(closeAsync());
  }

  @Override
  public String toString() {
    return "Lease{" + resource + ", token=" + token + ", owner=" + owner + "}";
  }
}
