package dev.fencekeeper.client;

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

  private final LeaseCalls client;
  private final String resource;
  private final String owner;
  private final Duration ttl;
  private final long token;
  // When the grant's answer reached this client: a keep-alive sent after it renews the lease.
  private final long grantAnsweredNanos = System.nanoTime();
  private final List<Registered<LossReason>> lossListeners = new ArrayList<>();
  private final List<Registered<State>> stateListeners = new ArrayList<>();
  // Guarded by this: the one source of state(), isValid() and remaining().
  private final LeaseView view;
  // The state state listeners were last told (HELD at first).
  private State announced = State.HELD;
  private CompletableFuture<Void> closing;
  private ScheduledFuture<?> deadlineCheck;
  private ScheduledFuture<?> atRiskCheck;

  Lease(
      LeaseCalls client, String resource, String owner, Duration ttl, long token, long sentNanos) {
    this.client = client;
    this.resource = resource;
    this.owner = owner;
    this.ttl = ttl;
    this.token = token;
    this.view = new LeaseView(ttl.toNanos(), sentNanos);
    scheduleDeadlineChecks();
  }

  /**
   * How long after a send this client counts a TTL to last: the TTL less 1,000 ppm of it. The
   * cluster measures the TTL on its time line, which may run up to 500 ppm fast while it slews
   * toward wall time, on a leader whose monotonic clock NTP may slew 500 ppm against this one; the
   * margin keeps the local deadline before the cluster's.
   */
  static long localTtlNanos(Duration ttl) {
    return localTtlNanos(ttl.toNanos());
  }

  static long localTtlNanos(long ttlNanos) {
    return ttlNanos - ttlNanos / 1_000;
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
      if (view.renewed(sentNanos, ttl.toNanos(), System.nanoTime())) {
        scheduleDeadlineChecks();
      }
    }
    settle();
  }

  /**
   * A session keep-alive did not renew this lease (no answer, a leader change, overload): AT_RISK
   * once less than a third of the TTL is left, as the timer would find.
   */
  void renewalMissed() {
    settle();
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
    return view.isValid(System.nanoTime());
  }

  /**
   * Where the lease stands now. Agrees with {@link #isValid()} and {@link #remaining()} at every
   * moment: {@link State#HELD} or {@link State#AT_RISK} exactly while it is valid; {@link
   * State#LOST} as soon as the local deadline has passed, even if no timer has run since (a paused
   * process that resumes sees LOST, not HELD).
   */
  public State state() {
    State now;
    synchronized (this) {
      now = view.state(System.nanoTime());
    }
    if (now != announced()) {
      settle(); // tell the listeners what this caller has just been told
    }
    return now;
  }

  private synchronized State announced() {
    return announced;
  }

  /**
   * Time left before the conservative local deadline while the lease is valid; zero once it is not
   * (past the deadline, lost, closed or abandoned).
   */
  public synchronized Duration remaining() {
    return Duration.ofNanos(view.remainingNanos(System.nanoTime()));
  }

  /**
   * Calls {@code listener} exactly once when this lease is lost, on the client's callback executor;
   * if it already was lost, at once on the calling thread. Not called after a voluntary {@link
   * #close()} or {@link #abandon()}.
   */
  public void onLost(Consumer<LossReason> listener) {
    java.util.Objects.requireNonNull(listener, "listener must not be null");
    settle();
    LossReason already;
    synchronized (this) {
      already = announced == State.LOST ? view.lossReason(System.nanoTime()) : null;
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
    java.util.Objects.requireNonNull(executor, "executor must not be null");
    java.util.Objects.requireNonNull(listener, "listener must not be null");
    settle();
    LossReason already;
    synchronized (this) {
      already = announced == State.LOST ? view.lossReason(System.nanoTime()) : null;
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
    java.util.Objects.requireNonNull(executor, "executor must not be null");
    java.util.Objects.requireNonNull(listener, "listener must not be null");
    stateListeners.add(new Registered<>(executor, listener));
  }

  // -----------------------------------------------------------------------------------------------
  // Fenced writes.

  /**
   * Writes one key fenced by this lease's token. Check the answer with {@link
   * WriteResult#isAccepted()} (or {@link WriteResult#orThrow()}): every other code means the value
   * was not written.
   *
   * @throws NullPointerException if {@code key} or {@code value} is null (delete a key with {@link
   *     #delete(String)})
   * @throws IllegalStateException if the client is closed
   */
  public WriteResult write(String key, byte[] value) {
    return ClusterCalls.join(writeAsync(List.of(KeyChange.put(key, value)), null));
  }

  /** Writes one key (UTF-8) fenced by this lease's token. */
  public WriteResult write(String key, String value) {
    return write(key, KeyChange.utf8(value));
  }

  /** Writes every entry of {@code values} atomically. */
  public WriteResult write(Map<String, byte[]> values) {
    java.util.Objects.requireNonNull(values, "values must not be null");
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
    return client.write(resource, token, changes, requestId);
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
        .renew(resource, token)
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
    long now = System.nanoTime();
    deadlineCheck =
        client
            .calls()
            .scheduler()
            .schedule(this::settle, Math.max(0, view.deadlineNanos() - now), TimeUnit.NANOSECONDS);
    atRiskCheck =
        client
            .calls()
            .scheduler()
            .schedule(this::settle, Math.max(0, view.atRiskAtNanos() - now), TimeUnit.NANOSECONDS);
  }

  private void onRenewal(Result result, long sentNanos) {
    if (result.code() == ResultCode.RENEWED) {
      synchronized (this) {
        // Still measured from the send time: the cluster's deadline is at least this late.
        if (view.renewed(
            sentNanos, Duration.ofMillis(result.ttlMs()).toNanos(), System.nanoTime())) {
          scheduleDeadlineChecks();
        }
      }
      settle();
    } else if (result.code() == ResultCode.LEASE_LOST) {
      markLost(LossReason.LEASE_LOST, true);
    } else {
      // UNAVAILABLE (an election, a slow node) is not a loss; the deadline decides.
      LOG.debug("Renewal of {} token {} did not succeed: {}", resource, token, result);
      synchronized (this) {
        view.renewalFailed();
      }
      settle();
    }
  }

  /** The cluster ended the lease (or said so): LOST, unless it already was final. */
  private void markLost(LossReason reason, boolean endedOnCluster) {
    synchronized (this) {
      view.lost(reason, System.nanoTime());
    }
    announce(endedOnCluster);
  }

  /** Tells the listeners of whatever the view says now that they have not been told yet. */
  private void settle() {
    announce(false);
  }

  /**
   * Brings the listeners up to the view's state: a loss once (forgetting the lease, so close() has
   * nothing to release), and each change among HELD, AT_RISK and LOST in order.
   */
  private void announce(boolean endedOnCluster) {
    LossReason loss;
    State to;
    List<Registered<LossReason>> lossToNotify = List.of();
    List<Registered<State>> stateToNotify = List.of();
    synchronized (this) {
      long now = System.nanoTime();
      loss = view.lossToAnnounce(now);
      to = view.state(now);
      if (loss != null) {
        cancelTimers();
        lossToNotify = List.copyOf(lossListeners);
        lossListeners.clear();
      }
      if (to == announced || announced == State.LOST || to == State.CLOSED) {
        to = null;
      } else {
        announced = to;
        stateToNotify = List.copyOf(stateListeners);
      }
    }
    if (loss != null) {
      client.forget(this, endedOnCluster);
      LOG.info("Lease on {} (token {}) lost: {}", resource, token, loss);
      client.calls().metrics().leaseLost();
      dispatch(lossToNotify, loss);
    }
    if (to == State.AT_RISK) {
      LOG.info(
          "Lease on {} (token {}) at risk: {} left without a successful renewal",
          resource,
          token,
          remaining());
    }
    if (to != null) {
      dispatch(stateToNotify, to);
    }
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
      if (!view.closed(System.nanoTime())) {
        return;
      }
      cancelTimers();
    }
    client.forget(this, false);
    settle(); // past its deadline, it was lost before it was abandoned
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
      // Past its local deadline it is LOST, but the cluster may still count it (the local deadline
      // comes first): releasing it then frees the resource sooner.
      release = view.closed(System.nanoTime());
      cancelTimers();
      closing =
          done = release ? new CompletableFuture<>() : CompletableFuture.completedFuture(null);
    }
    if (release) {
      client.forget(this, false);
      settle();
      client
          .release(resource, token)
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
