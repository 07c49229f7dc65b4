package dev.fencekeeper.client;

import dev.fencekeeper.client.wire.RequestKinds;
import dev.fencekeeper.client.wire.WaiterWakeups;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.CommonPool;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.ValidateRequest;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.proto.WriteRequest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded fencekeeper client. Thread-safe; one per process is plenty.
 *
 * <pre>{@code
 * try (FencingClient client = FencingClient.connect(ClusterConfig.load(path));
 *      Lease lease = client.acquire("daily-sales-report", Duration.ofSeconds(30))) {
 *   WriteResult r = lease.write("2026-11-29", reportBytes);   // carries lease.token()
 *   if (r.isStale()) { ... someone newer owns it: stop, do not retry blindly ... }
 * }
 * }</pre>
 *
 * <p>Every call has a {@code CompletableFuture} twin ({@code ...Async}). Leader changes are
 * absorbed here. The client speaks fencekeeper's client protocol to the nodes' client ports: it
 * follows a follower's NOT_LEADER answer to the leader and re-sends a command whose answer was lost
 * unchanged, so its request id applies it at most once; and one session stream renews every lease
 * it holds, one log entry per keep-alive, and brings their ends back as they commit. Reads that
 * fail during an election are retried too.
 */
public final class FencingClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FencingClient.class);

  /**
   * The connection-state changes, on a logger of their own so that a caller can tune them apart.
   */
  private static final Logger CONNECTION_LOG =
      LoggerFactory.getLogger("dev.fencekeeper.client.connection");

  // How often a queued acquire is re-sent: well inside the cluster's waiter-liveness window (10 s
  // default).
  private static final long WAITER_RESEND_MS = 1_000;
  private static final int DEFAULT_ENTRIES_IN_FLIGHT = 2;
  private static final java.util.concurrent.atomic.AtomicBoolean commonPoolChecked =
      new java.util.concurrent.atomic.AtomicBoolean();

  private final ClusterConfig config;
  // The nodes' client ports, and the one session that renews every lease this client holds.
  private final ClientPortTransport port;
  private final LeaseSession session;
  // Set first thing in close(): a grant that arrives from then on is released, not handed out.
  private volatile boolean closing;
  private final String defaultOwner;
  private final Duration callTimeout;
  private final Duration unreachableTimeout;
  private final Duration closeTimeout;
  private final ScheduledExecutorService scheduler;
  private final ExecutorService sendExecutor;
  private final Executor callbackExecutor;
  private final ExecutorService ownedCallbackExecutor; // null when the application gave its own
  private final Set<Waiting> openWaits = ConcurrentHashMap.newKeySet();
  // Leases handed out and neither lost, closed nor abandoned: close() releases them.
  private final Set<Lease> held = ConcurrentHashMap.newKeySet();
  // Acquires, cancel-waits and releases of late grants still in flight: close() waits for them.
  private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();
  private final Reachability reachability = new Reachability();
  // Calls not answered yet, with when they started: failed fast when no node can be reached at all.
  private final Map<CompletableFuture<Response>, Long> unanswered = new ConcurrentHashMap<>();
  private volatile ConnectionState connectionState = ConnectionState.CONNECTING;
  // The limits a node said it enforces; null until one did. Writes wait for them (once), so that
  // one too big for the cluster is refused here, before it is sent, and batches are sized by the
  // cluster's rules.
  private volatile dev.fencekeeper.proto.ServerLimits serverLimits;
  private CompletableFuture<Void> learningLimits; // guarded by this
  // When asking last failed (guarded by this): writes meanwhile go out unchecked rather than each
  // waiting.
  private long limitsUnknownSinceNanos;
  private static final long LIMITS_RETRY_NANOS = TimeUnit.SECONDS.toNanos(10);
  // A node answered without limits (an older version): nothing to learn, so writes never wait for
  // it.
  private volatile boolean limitsNotServed;
  private final List<Map.Entry<Executor, Consumer<ConnectionState>>> connectionListeners =
      new CopyOnWriteArrayList<>();
  private final ClientMetrics metrics;
  private final CommandCoalescer coalescer;
  private final String requestIdPrefix = UUID.randomUUID() + "-";
  private final java.util.concurrent.atomic.AtomicLong requestIdCounter =
      new java.util.concurrent.atomic.AtomicLong();

  private FencingClient(Builder settings) {
    this.config = settings.effectiveConfig();
    this.defaultOwner = settings.owner != null ? settings.owner : defaultOwnerLabel();
    // Long enough to ride out an election and a few slow attempts, short enough that a dead cluster
    // is reported rather than waited on forever.
    this.callTimeout =
        settings.callTimeout != null
            ? settings.callTimeout
            : config.requestTimeout().multipliedBy(5);
    this.unreachableTimeout = settings.unreachableTimeout;
    this.closeTimeout = settings.closeTimeout;
    this.metrics = new ClientMetrics(settings.metricRegistry);
    this.scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "fencekeeper-client-renewals");
              t.setDaemon(true);
              return t;
            });
    java.util.concurrent.atomic.AtomicInteger sender =
        new java.util.concurrent.atomic.AtomicInteger();
    this.sendExecutor =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "fencekeeper-client-send-" + sender.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    if (settings.callbackExecutor != null) {
      this.callbackExecutor = settings.callbackExecutor;
      this.ownedCallbackExecutor = null;
    } else {
      java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
      this.ownedCallbackExecutor =
          Executors.newCachedThreadPool(
              r -> {
                Thread t = new Thread(r, "fencekeeper-client-callbacks-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
              });
      this.callbackExecutor = ownedCallbackExecutor;
    }
    this.port =
        new ClientPortTransport(
            config.clientAddresses(),
            org.apache.ratis.grpc.GrpcConfigKeys.TLS.conf(settings.ratisParameters(config)),
            config.requestTimeout().toMillis(),
            reachability,
            metrics,
            scheduler,
            sendExecutor);
    this.session = new LeaseSession(this, port, defaultOwner);
    this.coalescer =
        new CommandCoalescer(
            this::sendThroughPort,
            entriesInFlight(),
            config.limits().maxRequestsPerBatch(),
            config.limits().maxValueBytes());
    long sweepMs = Math.max(50, Math.min(500, unreachableTimeout.toMillis() / 4));
    scheduler.scheduleWithFixedDelay(
        this::failUnreachableCalls, sweepMs, sweepMs, TimeUnit.MILLISECONDS);
  }

  /**
   * Log entries one client keeps outstanding before it coalesces further commands into batches. Two
   * keep the Raft pipeline busy while the next batch fills; more only make each batch smaller, and
   * the cost is per entry (docs/benchmarks.md, Coalescing). The system property exists for
   * benchmarking.
   */
  private static int entriesInFlight() {
    return Math.max(
        1, Integer.getInteger("fencekeeper.client.entries-in-flight", DEFAULT_ENTRIES_IN_FLIGHT));
  }

  /** Connects to the cluster described by {@code config}; nodes are contacted lazily. */
  public static FencingClient connect(ClusterConfig config) {
    return builder().config(config).build();
  }

  /**
   * As {@link #connect(ClusterConfig)}, labelling leases with {@code owner} unless a call names
   * one.
   */
  public static FencingClient connect(ClusterConfig config, String owner) {
    return builder().config(config).owner(owner).build();
  }

  /**
   * Settings for a new client: peers or a cluster file, TLS, timeouts, owner label, executor,
   * metrics.
   */
  public static Builder builder() {
    return new Builder();
  }

  private static FencingClient create(Builder settings) {
    if (!commonPoolChecked.getAndSet(true)) {
      CommonPool.threadPerStageWarning().ifPresent(w -> LOG.warn("Slower than it could be: {}", w));
    }
    return new FencingClient(settings);
  }

  private static String defaultOwnerLabel() {
    String host = System.getenv().getOrDefault("HOSTNAME", "localhost");
    return host + ":" + ProcessHandle.current().pid();
  }

  /** The cluster description this client was built from. */
  public ClusterConfig config() {
    return config;
  }

  /**
   * True when, for the whole {@code unreachableTimeout} up to now, no node could be contacted and
   * connections were refused: nothing this client sent in that time reached a node. (An election,
   * where nodes answer but none leads, or a slow node is not this.)
   */
  public boolean clusterUnreachable() {
    return reachability.unreachable(
        System.nanoTime() - unreachableTimeout.toNanos(), unreachableTimeout);
  }

  /** What the latest call saw of the cluster. */
  public ConnectionState connectionState() {
    return connectionState;
  }

  /**
   * Calls {@code listener} on {@code executor} with every later change of {@link
   * #connectionState()}, in order. A change is noticed by a call: a renewal, or the application's
   * own.
   */
  public void onConnectionStateChange(Executor executor, Consumer<ConnectionState> listener) {
    connectionListeners.add(Map.entry(executor, listener));
  }

  private void connectionIs(ConnectionState now) {
    ConnectionState before;
    synchronized (connectionListeners) {
      before = connectionState;
      if (before == now) {
        return;
      }
      connectionState = now;
    }
    if (now == ConnectionState.DISCONNECTED) {
      CONNECTION_LOG.warn("No node of {} answered: {}", config.peers(), reachability.lastRefusal());
    } else if (before == ConnectionState.DISCONNECTED) {
      CONNECTION_LOG.info("The cluster answers again");
    }
    for (Map.Entry<Executor, Consumer<ConnectionState>> l : connectionListeners) {
      try {
        l.getKey()
            .execute(
                () -> {
                  try {
                    l.getValue().accept(now);
                  } catch (RuntimeException e) {
                    LOG.warn("Connection-state listener failed on {}", now, e);
                  }
                });
      } catch (RejectedExecutionException e) {
        LOG.warn("Connection-state listener not told of {}: its executor refused the task", now);
      }
    }
  }

  /**
   * What the session saw of the cluster: a stream opened or a keep-alive answered, or no stream for
   * the unreachable timeout. Its keep-alives are this client's renewals.
   */
  void sessionReachable(boolean reached) {
    if (reached) {
      reachability.contact();
      connectionIs(ConnectionState.CONNECTED);
    } else {
      connectionIs(ConnectionState.DISCONNECTED);
    }
  }

  Duration unreachableTimeout() {
    return unreachableTimeout;
  }

  /** Where lease listeners registered without an executor run. */
  Executor callbackExecutor() {
    return callbackExecutor;
  }

  /** This client's request latency, retries, leader redirects and lost leases. */
  public ClientMetrics metrics() {
    return metrics;
  }

  // -----------------------------------------------------------------------------------------------
  // Leases with background renewal.

  /**
   * Acquires {@code resource} for {@code ttl} and keeps renewing it until closed or lost.
   *
   * @throws LeaseHeldException if another live lease holds it
   * @throws FencingException on invalid input or when no node answers
   * @throws CancellationException if the calling thread is interrupted (its interrupt status is
   *     kept)
   */
  public Lease acquire(String resource, Duration ttl) {
    return join(acquireAsync(resource, ttl, defaultOwner));
  }

  /** As {@link #acquire(String, Duration)}, labelled {@code owner}. */
  public Lease acquire(String resource, Duration ttl, String owner) {
    return join(acquireAsync(resource, ttl, owner));
  }

  /**
   * The asynchronous form of {@link #acquire(String, Duration)}. Cancelling the future, or
   * completing it first any other way ({@code orTimeout}), releases a grant that arrives afterwards
   * at once.
   */
  public CompletableFuture<Lease> acquireAsync(String resource, Duration ttl) {
    return acquireAsync(resource, ttl, defaultOwner);
  }

  /**
   * Acquires {@code resource}, waiting up to {@code waitTimeout} for it to become free. Waiters are
   * served in arrival order; the queue is replicated, so a leader change keeps it.
   *
   * @throws LeaseHeldException if the wait ends first (the place in line is given up)
   * @throws CancellationException if the calling thread is interrupted: the place in line is given
   *     up, a grant that raced with it is released, and the thread's interrupt status is kept
   */
  public Lease acquire(String resource, Duration ttl, Duration waitTimeout) {
    return join(
        acquireAsync(resource, ttl, waitTimeout, AcquireOptions.defaults().owner(defaultOwner)));
  }

  /**
   * The asynchronous form of {@link #acquire(String, Duration, Duration)}. Cancelling the future
   * (or completing it first, as {@code orTimeout} does) gives the place in line up and releases a
   * grant that raced with it.
   */
  public CompletableFuture<Lease> acquireAsync(
      String resource, Duration ttl, Duration waitTimeout) {
    return acquireAsync(resource, ttl, waitTimeout, AcquireOptions.defaults().owner(defaultOwner));
  }

  /** The general form: owner, request id and lock-delay in {@code options}. */
  public Lease acquire(
      String resource, Duration ttl, Duration waitTimeout, AcquireOptions options) {
    return join(acquireAsync(resource, ttl, waitTimeout, options));
  }

  /** The general form: owner, request id and lock-delay in {@code options}. */
  public CompletableFuture<Lease> acquireAsync(
      String resource, Duration ttl, Duration waitTimeout, AcquireOptions options) {
    checkAcquire(resource, ttl, options);
    java.util.Objects.requireNonNull(waitTimeout, "waitTimeout must not be null");
    String requestId =
        options.requestId() != null ? options.requestId() : UUID.randomUUID().toString();
    String owner = options.owner() != null ? options.owner() : defaultOwner;
    Waiting waiting =
        new Waiting(
            resource,
            ttl,
            owner,
            requestId,
            options.lockDelay(),
            System.nanoTime() + waitTimeout.toNanos());
    if (closing) {
      waiting.result.completeExceptionally(closedError());
      return waiting.result;
    }
    openWaits.add(waiting);
    // Whoever completes the future first — the wait, a cancel, orTimeout, close() — the place is
    // given up.
    waiting.result.whenComplete(
        (lease, error) -> {
          openWaits.remove(waiting);
          if (error != null && !waiting.leftQueue) {
            track(cancelWait(resource, waiting.requestId));
          }
        });
    waiting.attempt();
    return waiting.result;
  }

  /**
   * Acquires {@code resource} if it is free now, with the same self-renewing {@link Lease} as
   * {@link #acquire}; empty if another lease holds it (or waiters are queued, or a lock-delay
   * runs).
   *
   * @throws FencingException on invalid input or when no node answers
   */
  public Optional<Lease> tryAcquire(String resource, Duration ttl) {
    return join(tryAcquireAsync(resource, ttl, AcquireOptions.defaults()));
  }

  /**
   * As {@link #tryAcquire(String, Duration)} with owner, request id and lock-delay in {@code
   * options}.
   */
  public Optional<Lease> tryAcquire(String resource, Duration ttl, AcquireOptions options) {
    return join(tryAcquireAsync(resource, ttl, options));
  }

  /** The asynchronous form of {@link #tryAcquire(String, Duration)}. */
  public CompletableFuture<Optional<Lease>> tryAcquireAsync(String resource, Duration ttl) {
    return tryAcquireAsync(resource, ttl, AcquireOptions.defaults());
  }

  /** The asynchronous form of {@link #tryAcquire(String, Duration, AcquireOptions)}. */
  public CompletableFuture<Optional<Lease>> tryAcquireAsync(
      String resource, Duration ttl, AcquireOptions options) {
    return leaseFrom(resource, ttl, options, true);
  }

  /**
   * One acquire whose grant becomes a {@link Lease}: handed to the caller if it still waits for it,
   * released at once otherwise.
   */
  @SuppressWarnings("unchecked")
  private <T> CompletableFuture<T> leaseFrom(
      String resource, Duration ttl, AcquireOptions options, boolean optional) {
    checkAcquire(resource, ttl, options);
    CompletableFuture<T> result = new CompletableFuture<>();
    if (closing) {
      result.completeExceptionally(closedError());
      return result;
    }
    String owner = options.owner() != null ? options.owner() : defaultOwner;
    // The local deadline counts from before the request leaves, so it can only be early, never
    // late.
    long sentNanos = System.nanoTime();
    CompletableFuture<Result> attempt;
    try {
      attempt =
          command(acquireRequest(resource, ttl, options.owner(owner), sessionId()))
              .thenApply(Result::new);
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
      return result;
    }
    track(attempt);
    attempt.whenComplete(
        (r, error) -> {
          if (error != null) {
            result.completeExceptionally(error);
          } else if (r.code() == ResultCode.GRANTED) {
            Lease lease = new Lease(this, resource, owner, ttl, r.token(), sentNanos);
            deliver(
                (CompletableFuture<Object>) result, lease, optional ? Optional.of(lease) : lease);
          } else if (optional
              && (r.code() == ResultCode.HELD || r.code() == ResultCode.LOCK_DELAYED)) {
            result.complete((T) Optional.empty());
          } else if (r.code() == ResultCode.HELD) {
            result.completeExceptionally(new LeaseHeldException(r));
          } else {
            result.completeExceptionally(new FencingException(r));
          }
        });
    return result;
  }

  /**
   * Arguments no acquire can be built from fail here, at once, before anything is sent; values the
   * cluster judges (a TTL that is not positive) are answered INVALID_ARGUMENT by it, as before.
   */
  private static void checkAcquire(String resource, Duration ttl, AcquireOptions options) {
    java.util.Objects.requireNonNull(resource, "resource must not be null");
    java.util.Objects.requireNonNull(ttl, "ttl must not be null");
    java.util.Objects.requireNonNull(options, "options must not be null");
  }

  /**
   * Hands {@code lease} over by completing {@code result} with {@code value}; when the caller no
   * longer waits (cancelled, timed out, the client closing), releases it instead, so no grant is
   * left held, or renewed, by nobody.
   */
  private void deliver(CompletableFuture<Object> result, Lease lease, Object value) {
    held.add(lease);
    if (closing || !result.complete(value)) {
      LOG.debug("Releasing {}: granted after its caller gave up", lease);
      track(lease.closeAsync());
    } else {
      session.add(lease);
    }
  }

  /** The session id leases are acquired with. */
  private String sessionId() {
    return session.id();
  }

  /**
   * Forgets a lease that is no longer held (lost, closed, abandoned): close() has nothing to
   * release.
   */
  void forget(Lease lease, boolean endedOnCluster) {
    held.remove(lease);
    session.remove(lease, endedOnCluster);
  }

  private <T> CompletableFuture<T> track(CompletableFuture<T> call) {
    inFlight.add(call);
    call.whenComplete((r, e) -> inFlight.remove(call));
    return call;
  }

  private static FencingException closedError() {
    return new FencingException(
        new Result(
            Response.newBuilder()
                .setCode(dev.fencekeeper.proto.ResultCode.UNAVAILABLE)
                .setMessage("the client is closed")
                .build()));
  }

  /**
   * One blocking acquire: re-sends the same acquire (same request id) to stay queued, and learns of
   * its grant from the lease event that names its request id; gives its place up when the wait
   * ends.
   */
  private final class Waiting {
    final String resource;
    final Duration ttl;
    final String owner;
    volatile String requestId; // replaced when a grant ran out before this client heard of it
    final Duration lockDelay;
    final long waitUntilNanos;
    final CompletableFuture<Lease> result = new CompletableFuture<>();
    // True once this waiter is known not to be queued (a final answer, or its own CancelWait sent).
    volatile boolean leftQueue;
    long watchIndex;
    int watchSeq = Integer.MAX_VALUE;
    volatile long lastSentNanos;
    // When the acquire last answered WAITING was sent: the grant came after the node queued it, so
    // a lease timed from here ends locally no later than in the cluster. 0 until an answer said
    // WAITING.
    volatile long queuedSinceNanos;

    Waiting(
        String resource,
        Duration ttl,
        String owner,
        String requestId,
        Duration lockDelay,
        long waitUntilNanos) {
      this.resource = resource;
      this.ttl = ttl;
      this.owner = owner;
      this.requestId = requestId;
      this.lockDelay = lockDelay;
      this.waitUntilNanos = waitUntilNanos;
    }

    void attempt() {
      if (result.isDone()) {
        return;
      }
      long remainingMs = Math.max(0, (waitUntilNanos - System.nanoTime()) / 1_000_000);
      long sentNanos = System.nanoTime();
      lastSentNanos = sentNanos;
      Request request =
          Request.newBuilder()
              .setAcquire(
                  AcquireRequest.newBuilder()
                      .setResource(resource)
                      .setOwner(owner)
                      .setTtlMs(ttl.toMillis())
                      .setRequestId(requestId)
                      .setWaitMs(remainingMs)
                      .setLockDelayMs(lockDelay.toMillis())
                      .setSessionId(sessionId()))
              .build();
      track(command(request))
          .thenApply(Result::new)
          .whenComplete((r, e) -> onAnswer(r, e, sentNanos));
    }

    private void onAnswer(Result r, Throwable error, long sentNanos) {
      LOG.debug(
          "Waiting for {} ({}): {} after {} ms",
          resource,
          requestId,
          error != null ? error : r,
          (System.nanoTime() - sentNanos) / 1_000_000);
      if (error != null) {
        result.completeExceptionally(error);
        return;
      }
      switch (r.code()) {
        case GRANTED -> {
          if (!r.live()) {
            // Granted while queued, but it ran out before this client heard of it (a stalled
            // client, a slow leader change): that lease is gone. Queue again rather than hand back
            // a dead lease.
            LOG.debug(
                "Grant {} of {} expired before it was picked up; queueing again",
                r.token(),
                resource);
            requestId = UUID.randomUUID().toString();
            attempt();
            return;
          }
          // A grant made while queued started before this request was sent: count only the time the
          // cluster says is left, from the send time.
          grant(
              new Lease(
                  FencingClient.this,
                  resource,
                  owner,
                  ttl,
                  r.token(),
                  leaseStart(sentNanos, r.expiresAtMs() - r.nowMs())));
        }
        case WAITING, UNAVAILABLE -> {
          if (r.code() == ResultCode.WAITING) {
            queuedSinceNanos = sentNanos;
            // Nothing before the entry that answered WAITING can be this waiter's grant (it would
            // have answered GRANTED), so the watch starts at that entry: a new waiter does not
            // download the resource's history, which cost each W6 hand-off an O(history) watch
            // answer.
            if (r.appliedIndex() - 1 >= watchIndex) {
              watchIndex = r.appliedIndex() - 1;
              watchSeq = Integer.MAX_VALUE;
            }
          }
          if (System.nanoTime() >= waitUntilNanos) {
            giveUp(r);
          } else {
            awaitChange();
          }
        }
        case HELD, LOCK_DELAYED -> {
          if (System.nanoTime() >= waitUntilNanos) {
            leftQueue = true; // answered without queueing it
            result.completeExceptionally(new LeaseHeldException(r));
          } else {
            awaitChange(); // e.g. the wait was zero when sent; try again until the deadline
          }
        }
        default -> {
          leftQueue = true; // refused (invalid input, permission): never queued
          result.completeExceptionally(new FencingException(r));
        }
      }
    }

    /**
     * Sleeps until an event on the resource that may concern this waiter, the re-send interval, or
     * the end of the wait. Events that cannot (another waiter's grant) only move the watch on: if
     * every queued client re-sent its acquire on every grant, each grant would cost one log entry
     * per waiter, and the leader would spend its time on re-sends instead of grants.
     */
    private void awaitChange() {
      if (result.isDone()) {
        return;
      }
      long now = System.nanoTime();
      long leftMs = Math.max(1, (waitUntilNanos - now) / 1_000_000);
      long resendInMs =
          Math.max(1, (lastSentNanos + WAITER_RESEND_MS * 1_000_000 - now) / 1_000_000);
      long timeoutMs = Math.min(leftMs, resendInMs);
      watchOnce(
              WatchRequest.newBuilder()
                  .setResource(resource)
                  .setAfterIndex(watchIndex)
                  .setAfterSeq(watchSeq)
                  .setTimeoutMs(timeoutMs)
                  .setWaiterRequestId(requestId)
                  .build())
          .whenComplete(
              (w, e) -> {
                boolean moved = false;
                if (w != null
                    && w.getAppliedIndex() > 0
                    && w.getCode() != dev.fencekeeper.proto.ResultCode.COMPACTED) {
                  if (w.getEventsCount() > 0) {
                    var last = w.getEvents(w.getEventsCount() - 1);
                    watchIndex = last.getIndex();
                    watchSeq = last.getSeq();
                    moved = true;
                  } else {
                    watchIndex = Math.max(watchIndex, w.getAppliedIndex());
                  }
                }
                if (e != null) {
                  later(this::attempt, 50, TimeUnit.MILLISECONDS);
                } else if (moved && takeGrantFrom(w.getEventsList())) {
                  return;
                } else if (moved
                    && !WaiterWakeups.mayConcern(w.getEventsList(), requestId)
                    && System.nanoTime() - lastSentNanos < WAITER_RESEND_MS * 1_000_000
                    && System.nanoTime() < waitUntilNanos) {
                  awaitChange();
                } else {
                  attempt();
                }
              });
    }

    /**
     * Completes with the lease the events grant to this waiter, without the log entry a re-sent
     * acquire would cost: the event carries the token and the lease's length. False (re-send, as
     * before) when they grant nothing to it, when its lease already ended among them, or when this
     * client cannot bound when the grant started (no WAITING answer yet) or that bound leaves
     * nothing of the lease.
     */
    private boolean takeGrantFrom(List<dev.fencekeeper.proto.LeaseEvent> events) {
      dev.fencekeeper.proto.LeaseEvent grant = null;
      for (dev.fencekeeper.proto.LeaseEvent event : events) {
        if (event.getType() == dev.fencekeeper.proto.LeaseEvent.Type.ACQUIRED
            && event.getRequestId().equals(requestId)) {
          grant = event;
        } else if (grant != null
            && event.getToken() == grant.getToken()
            && event.getType() != dev.fencekeeper.proto.LeaseEvent.Type.RENEWED) {
          return false; // released, expired or revoked before this client heard of it
        }
      }
      long since = queuedSinceNanos;
      if (grant == null || since == 0) {
        return false;
      }
      long startNanos = leaseStart(since, grant.getExpiresAtMs() - grant.getAtMs());
      if (startNanos + ttl.toNanos() - System.nanoTime() < ttl.toNanos() / 2) {
        return false; // too little left by this client's reckoning; the re-sent acquire tells
        // exactly
      }
      grant(new Lease(FencingClient.this, resource, owner, ttl, grant.getToken(), startNanos));
      return true;
    }

    /**
     * When, on this client's clock, to count the lease's TTL from: {@code boundNanos} is a moment
     * no later than the cluster's view of the grant, {@code leftMs} what the cluster said was left
     * of the lease then.
     */
    private long leaseStart(long boundNanos, long leftMs) {
      return boundNanos
          - Duration.ofMillis(ttl.toMillis() - Math.min(leftMs, ttl.toMillis())).toNanos();
    }

    /**
     * Hands the lease over; if the caller gave up meanwhile, its CancelWait is on its way and this
     * releases.
     */
    @SuppressWarnings("unchecked")
    private void grant(Lease lease) {
      leftQueue = true;
      deliver((CompletableFuture<Object>) (CompletableFuture<?>) result, lease, lease);
    }

    /**
     * The wait is over: leave the queue (which also releases a grant that raced with giving up).
     */
    private void giveUp(Result last) {
      leftQueue = true;
      track(cancelWait(resource, requestId))
          .whenComplete((c, e) -> result.completeExceptionally(new LeaseHeldException(last)));
    }

    /** The client is closing: fail the wait, which sends its CancelWait (see acquireAsync). */
    void abandon() {
      result.completeExceptionally(
          new FencingException(
              new Result(
                  Response.newBuilder()
                      .setCode(dev.fencekeeper.proto.ResultCode.UNAVAILABLE)
                      .setMessage("client closed while waiting")
                      .build())));
    }
  }

  private CompletableFuture<Response> cancelWait(String resource, String requestId) {
    return command(
        Request.newBuilder()
            .setCancelWait(
                CancelWaitRequest.newBuilder().setResource(resource).setRequestId(requestId))
            .build());
  }

  /** As {@link #acquire(String, Duration, String)}, asynchronously. */
  public CompletableFuture<Lease> acquireAsync(String resource, Duration ttl, String owner) {
    return leaseFrom(resource, ttl, AcquireOptions.defaults().owner(owner), false);
  }

  // -----------------------------------------------------------------------------------------------
  // Raw commands: one request each, no background work. For tools and callers managing tokens.

  /**
   * One acquire attempt: GRANTED with a token, or HELD naming the holder. Nothing renews it and
   * nothing releases it: the caller manages the token (as the command line does).
   */
  public Result acquireToken(String resource, Duration ttl, String owner) {
    return join(acquireTokenAsync(resource, ttl, owner));
  }

  /** The asynchronous form of {@link #acquireToken(String, Duration, String)}. */
  public CompletableFuture<Result> acquireTokenAsync(String resource, Duration ttl, String owner) {
    return acquireTokenAsync(resource, ttl, AcquireOptions.defaults().owner(owner));
  }

  /**
   * One acquire attempt with options. Every attempt carries a request id (generated when the
   * options name none), so a retry after a lost reply returns the same lease instead of a second
   * one.
   */
  public Result acquireToken(String resource, Duration ttl, AcquireOptions options) {
    return join(acquireTokenAsync(resource, ttl, options));
  }

  /** The asynchronous form of {@link #acquireToken(String, Duration, AcquireOptions)}. */
  public CompletableFuture<Result> acquireTokenAsync(
      String resource, Duration ttl, AcquireOptions options) {
    // Nothing keeps a raw token alive: it is acquired outside the session.
    return command(acquireRequest(resource, ttl, options, "")).thenApply(Result::new);
  }

  private Request acquireRequest(
      String resource, Duration ttl, AcquireOptions options, String sessionId) {
    return Request.newBuilder()
        .setAcquire(
            AcquireRequest.newBuilder()
                .setResource(resource)
                .setOwner(options.owner() == null ? defaultOwner : options.owner())
                .setTtlMs(ttl.toMillis())
                .setRequestId(
                    options.requestId() == null
                        ? UUID.randomUUID().toString()
                        : options.requestId())
                .setLockDelayMs(options.lockDelay().toMillis())
                .setSessionId(sessionId))
        .build();
  }

  /** Renews lease {@code token}; a null {@code ttl} keeps the lease's own TTL. */
  public Result renew(String resource, long token, Duration ttl) {
    return join(renewAsync(resource, token, ttl));
  }

  /** The asynchronous form of {@link #renew(String, long, Duration)}. */
  public CompletableFuture<Result> renewAsync(String resource, long token, Duration ttl) {
    RenewRequest.Builder renew = RenewRequest.newBuilder().setResource(resource).setToken(token);
    if (ttl != null) {
      renew.setTtlMs(ttl.toMillis());
    }
    return command(Request.newBuilder().setRenew(renew).build()).thenApply(Result::new);
  }

  /** Ends lease {@code token}: RELEASED (also when it had already ended), or NOT_HOLDER. */
  public Result release(String resource, long token) {
    return join(releaseAsync(resource, token));
  }

  /** The asynchronous form of {@link #release(String, long)}. */
  public CompletableFuture<Result> releaseAsync(String resource, long token) {
    Request request =
        Request.newBuilder()
            .setRelease(ReleaseRequest.newBuilder().setResource(resource).setToken(token))
            .build();
    return command(request).thenApply(Result::new);
  }

  /** Writes one key fenced by {@code token}. */
  public WriteResult write(String resource, long token, String key, byte[] value) {
    return write(resource, token, List.of(KeyChange.put(key, value)), null);
  }

  /**
   * Changes every key in {@code changes} atomically, fenced by {@code token}. {@code requestId}
   * makes a retry of the same logical write safe; when null, a fresh id is generated for this call
   * (its own transport retries are still deduplicated).
   */
  public WriteResult write(String resource, long token, List<KeyChange> changes, String requestId) {
    return join(writeAsync(resource, token, changes, requestId));
  }

  /** The asynchronous form of {@link #write(String, long, List, String)}. */
  public CompletableFuture<WriteResult> writeAsync(
      String resource, long token, List<KeyChange> changes, String requestId) {
    if (serverLimits != null || limitsNotServed) {
      return checkedWrite(resource, token, changes, requestId);
    }
    return learnLimits().thenCompose(known -> checkedWrite(resource, token, changes, requestId));
  }

  /**
   * The write, unless it is bigger than the cluster's limits allow: then refused without sending
   * it.
   */
  private CompletableFuture<WriteResult> checkedWrite(
      String resource, long token, List<KeyChange> changes, String requestId) {
    String tooBig = tooBig(resource, changes);
    if (tooBig != null) {
      return CompletableFuture.completedFuture(
          new WriteResult(
              Response.newBuilder()
                  .setCode(dev.fencekeeper.proto.ResultCode.INVALID_ARGUMENT)
                  .setSentToken(token)
                  .setMessage(tooBig + "; nothing was sent")
                  .build()));
    }
    return sendWrite(resource, token, changes, requestId);
  }

  /**
   * Why {@code changes} exceed the limits the cluster told, or null (also while they are unknown).
   */
  private String tooBig(String resource, List<KeyChange> changes) {
    dev.fencekeeper.proto.ServerLimits limits = serverLimits;
    if (limits == null) {
      return null;
    }
    int resourceBytes = utf8Length(resource);
    if (limits.getMaxResourceBytes() > 0 && resourceBytes > limits.getMaxResourceBytes()) {
      return "resource: "
          + resourceBytes
          + " bytes exceed the cluster's limits.resource-name.max-bytes ("
          + limits.getMaxResourceBytes()
          + ")";
    }
    long total = 0;
    for (KeyChange change : changes) {
      int keyBytes = utf8Length(change.key());
      if (limits.getMaxKeyBytes() > 0 && keyBytes > limits.getMaxKeyBytes()) {
        return "key: "
            + keyBytes
            + " bytes exceed the cluster's limits.key.max-bytes ("
            + limits.getMaxKeyBytes()
            + ")";
      }
      int valueBytes = change.value() == null ? 0 : change.value().length;
      if (limits.getMaxValueBytes() > 0 && valueBytes > limits.getMaxValueBytes()) {
        return "value: "
            + valueBytes
            + " bytes for key '"
            + change.key()
            + "' exceed the cluster's limits.value.max-bytes ("
            + limits.getMaxValueBytes()
            + ")";
      }
      total += valueBytes;
    }
    if (limits.getMaxValueBytes() > 0 && total > limits.getMaxValueBytes()) {
      return "value: "
          + total
          + " bytes in one write exceed the cluster's limits.value.max-bytes ("
          + limits.getMaxValueBytes()
          + ")";
    }
    return null;
  }

  private static int utf8Length(String s) {
    return s == null ? 0 : s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
  }

  /**
   * Asks the nodes, one after another, for the limits they enforce (a node-info query, answered by
   * the node itself). Completes normally either way, within the unreachable bound: without an
   * answer the write goes out unchecked, the cluster still checks it, and the next write asks
   * again.
   */
  private CompletableFuture<Void> learnLimits() {
    synchronized (this) {
      if (serverLimits != null) {
        return CompletableFuture.completedFuture(null);
      }
      if (learningLimits != null
          && learningLimits.isDone()
          && System.nanoTime() - limitsUnknownSinceNanos < LIMITS_RETRY_NANOS) {
        return learningLimits;
      }
      if (learningLimits == null || learningLimits.isDone()) {
        CompletableFuture<Void> asking =
            askForLimits()
                .orTimeout(unreachableTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .handle(
                    (ok, error) -> {
                      if (error != null) {
                        LOG.debug("The cluster's limits are not known yet: {}", error.toString());
                        synchronized (this) {
                          limitsUnknownSinceNanos = System.nanoTime();
                        }
                      }
                      return null;
                    });
        learningLimits = asking;
      }
      return learningLimits;
    }
  }

  /**
   * One node-info query: whichever node answers it tells the limits, which every node of a cluster
   * shares.
   */
  private CompletableFuture<Void> askForLimits() {
    Request request = Request.newBuilder().setNodeInfo(NodeInfoQuery.getDefaultInstance()).build();
    CompletableFuture<Response> asked;
    try {
      asked =
          port.call(request, unreachableTimeout.toMillis(), null)
              .thenApply(ClientPortTransport.Answer::response);
    } catch (RuntimeException e) {
      asked = CompletableFuture.failedFuture(e);
    }
    return asked.thenAccept(
        response -> {
          if (!response.hasNode() || !response.getNode().hasLimits()) {
            limitsNotServed = true; // a node of a version that does not tell them
            return;
          }
          synchronized (this) {
            if (serverLimits == null) {
              dev.fencekeeper.proto.ServerLimits limits = response.getNode().getLimits();
              coalescer.limits(limits.getMaxRequestsPerBatch(), limits.getMaxValueBytes());
              serverLimits = limits;
              LOG.debug("The cluster enforces {}", limits);
            }
          }
        });
  }

  private CompletableFuture<WriteResult> sendWrite(
      String resource, long token, List<KeyChange> changes, String requestId) {
    WriteRequest.Builder write =
        WriteRequest.newBuilder()
            .setResource(resource)
            .setToken(token)
            .setRequestId(requestId == null ? freshRequestId() : requestId);
    for (KeyChange change : changes) {
      write.addWrites(
          KeyWrite.newBuilder()
              .setKey(change.key())
              // Copied: a coalesced write is serialized after this method returns, when the caller
              // may already be reusing its array.
              .setValue(ByteString.copyFrom(change.value()))
              .setDelete(change.delete()));
    }
    return command(Request.newBuilder().setWrite(write).build()).thenApply(WriteResult::new);
  }

  // -----------------------------------------------------------------------------------------------
  // Queries.

  /** Reads a protected value, linearizably. */
  public ReadResult read(String resource, String key) {
    return read(resource, key, ReadConsistency.LINEARIZABLE);
  }

  /**
   * Reads a protected value with the given consistency (a stale read may be answered by any node).
   */
  public ReadResult read(String resource, String key, ReadConsistency consistency) {
    return join(readAsync(resource, key, consistency));
  }

  /** The asynchronous form of {@link #read(String, String, ReadConsistency)}. */
  public CompletableFuture<ReadResult> readAsync(
      String resource, String key, ReadConsistency consistency) {
    Request request =
        Request.newBuilder()
            .setRead(ReadRequest.newBuilder().setResource(resource).setKey(key))
            .build();
    return query(request, consistency).thenApply(ReadResult::new);
  }

  /** The live lease of {@code resource}, if any, and the newest token issued for it. */
  public Result lease(String resource) {
    return join(leaseAsync(resource));
  }

  /** The asynchronous form of {@link #lease(String)}. */
  public CompletableFuture<Result> leaseAsync(String resource) {
    Request request =
        Request.newBuilder().setLease(LeaseQuery.newBuilder().setResource(resource)).build();
    return query(request, ReadConsistency.LINEARIZABLE).thenApply(Result::new);
  }

  /**
   * Whether {@code token} is the live lease of {@code resource}: CURRENT, STALE or EXPIRED
   * (UNKNOWN_TOKEN if never issued) — for services that fence their own writes with fencekeeper's
   * tokens.
   */
  public Result validate(String resource, long token) {
    return join(validateAsync(resource, token));
  }

  /** The asynchronous form of {@link #validate(String, long)}. */
  public CompletableFuture<Result> validateAsync(String resource, long token) {
    Request request =
        Request.newBuilder()
            .setValidate(ValidateRequest.newBuilder().setResource(resource).setToken(token))
            .build();
    return query(request, ReadConsistency.LINEARIZABLE).thenApply(Result::new);
  }

  /**
   * One page of resources whose name starts with {@code prefix} (with their live lease, if any),
   * after {@code after} in name order. The entries are for fencekeeper's own tools (the command
   * line's {@code leases list}); applications read single leases with {@link #lease(String)}.
   */
  public Result listLeases(String prefix, String after, int limit) {
    return send(
        Request.newBuilder()
            .setList(
                ListRequest.newBuilder()
                    .setWhat(ListRequest.What.LEASES)
                    .setPrefix(prefix)
                    .setAfter(after)
                    .setLimit(limit))
            .build());
  }

  /** One page of the keys of {@code resource} starting with {@code prefix}, after {@code after}. */
  public Result listKeys(String resource, String prefix, String after, int limit) {
    return send(
        Request.newBuilder()
            .setList(
                ListRequest.newBuilder()
                    .setWhat(ListRequest.What.KEYS)
                    .setResource(resource)
                    .setPrefix(prefix)
                    .setAfter(after)
                    .setLimit(limit))
            .build());
  }

  /**
   * Writes a consistent copy of the whole state — leases, values, receipts and the token sequence —
   * to {@code file} (replaced atomically, readable by this user alone: it holds every protected
   * value). The answer carries the backup's size in {@code totalBytes}, its newest token in {@code
   * currentToken()} and its resource count in {@code version()}. Seed a new cluster from it with
   * {@code fencekeeper restore}.
   */
  @SuppressWarnings("try") // out is closed before the move, so that the file moved is complete
  public Result backup(java.nio.file.Path file) {
    java.nio.file.Path tmp = file.resolveSibling(file.getFileName() + ".partial");
    try (java.io.OutputStream out = dev.fencekeeper.config.PrivateFiles.newOutputStream(tmp)) {
      // The first call freezes the state on the node that answers it; every chunk comes from there.
      String[] frozenAt = new String[1];
      Result first =
          sendBackup(
              Request.newBuilder().setBackup(BackupRequest.getDefaultInstance()).build(), frozenAt);
      if (first.code() != ResultCode.FOUND) {
        return first;
      }
      Response r = first.response;
      first.response.getChunk().writeTo(out);
      long written = r.getChunk().size();
      while (written < r.getTotalBytes()) {
        Result next =
            sendBackup(
                Request.newBuilder()
                    .setBackup(
                        BackupRequest.newBuilder().setBackupId(r.getBackupId()).setOffset(written))
                    .build(),
                frozenAt);
        if (next.code() != ResultCode.FOUND || next.response.getChunk().isEmpty()) {
          return next;
        }
        next.response.getChunk().writeTo(out);
        written += next.response.getChunk().size();
      }
      out.close();
      java.nio.file.Files.move(
          tmp,
          file,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      return new Result(r.toBuilder().clearChunk().build());
    } catch (java.io.IOException e) {
      return new Result(
          Response.newBuilder()
              .setCode(dev.fencekeeper.proto.ResultCode.INTERNAL)
              .setMessage("cannot write " + file + ": " + e.getMessage())
              .build());
    }
  }

  /**
   * One backup call: through the client port at the node {@code frozenAt[0]} names (any node for
   * the first call, which records the node that answered).
   */
  private Result sendBackup(Request request, String[] frozenAt) {
    CompletableFuture<Response> answer =
        port.call(request, callTimeout.toMillis(), frozenAt[0])
            .thenApply(
                a -> {
                  frozenAt[0] = a.address();
                  return a.response();
                });
    return new Result(
        join(
            settle(
                failingFastWhenUnreachable(answer)
                    .orTimeout(callTimeout.toMillis(), TimeUnit.MILLISECONDS),
                false)));
  }

  /**
   * Ends the live lease of {@code resource} whoever holds it (operator action). The holder's later
   * writes are rejected and its {@link Lease} reports the loss.
   */
  public Result revoke(String resource, String reason) {
    return join(
        command(
                Request.newBuilder()
                    .setRevoke(
                        RevokeRequest.newBuilder()
                            .setResource(resource)
                            .setReason(reason == null ? "" : reason))
                    .build())
            .thenApply(Result::new));
  }

  /**
   * Watches lease events on one resource ({@code prefix == false}) or on every resource starting
   * with {@code name}, delivering them to {@code listener} in commit order from the position after
   * ({@code afterIndex}, {@code afterSeq}); pass {@link Watch#FROM_NOW} to start with the next
   * event. Resumes by itself after errors and leader changes, without gaps or duplicates.
   */
  public Watch watch(String name, boolean prefix, long afterIndex, Consumer<LeaseEvent> listener) {
    return new Watch(this, name, prefix, afterIndex, e -> listener.accept(LeaseEvent.of(e)));
  }

  CompletableFuture<Response> watchOnce(WatchRequest request) {
    try {
      return port.watchOnce(request);
    } catch (RuntimeException e) {
      // Failing the future keeps every caller's retry loop alive; a throw would end it silently.
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * What node {@code peerId} says about itself, asked of that node alone (not through the leader).
   *
   * @throws FencingException with {@link ResultCode#UNAVAILABLE} if it does not answer within
   *     {@code timeout}
   */
  public NodeStatus nodeStatus(String peerId, Duration timeout) {
    NodeInfo info;
    try {
      info = nodeInfo(peerId, timeout);
    } catch (FencingException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new FencingException(
          new Result(
              Response.newBuilder()
                  .setCode(dev.fencekeeper.proto.ResultCode.UNAVAILABLE)
                  .setMessage(
                      "node "
                          + peerId
                          + " did not answer within "
                          + timeout
                          + ": "
                          + e.getMessage())
                  .build()),
          e);
    }
    return new NodeStatus(
        info.getId(),
        info.getAddress(),
        info.getRole(),
        info.getTerm(),
        info.getLastAppliedIndex(),
        info.getCommitIndex(),
        info.getLeaderId());
  }

  /**
   * What node {@code peerId} says about itself; fails if it does not answer within {@code timeout}.
   */
  NodeInfo nodeInfo(String peerId, Duration timeout) {
    Request request = Request.newBuilder().setNodeInfo(NodeInfoQuery.getDefaultInstance()).build();
    String address = port.addressOf(peerId);
    if (address == null) {
      throw new IllegalArgumentException(
          "no member '" + peerId + "' in " + config.peers() + ": name one of its node ids");
    }
    return join(port.call(request, timeout.toMillis(), address)
            .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS))
        .response()
        .getNode();
  }

  /**
   * Sends any request envelope as built by the caller: queries as linearizable reads, everything
   * else through the log. For tools and tests that need the wire's full range, malformed input
   * included.
   */
  Result send(Request request) {
    return join(sendAsync(request));
  }

  CompletableFuture<Result> sendAsync(Request request) {
    boolean query = RequestKinds.isQuery(request.getCommandCase());
    return (query ? query(request, ReadConsistency.LINEARIZABLE) : command(request))
        .thenApply(Result::new);
  }

  // -----------------------------------------------------------------------------------------------
  // Transport.

  CompletableFuture<Response> command(Request request) {
    CompletableFuture<Response> sent = coalescer.submit(request);
    return metrics.timed(
        request.getCommandCase(),
        settle(
            failingFastWhenUnreachable(sent)
                .orTimeout(callTimeout.toMillis(), TimeUnit.MILLISECONDS),
            true));
  }

  /**
   * {@code sent}, failed early when no node can be reached at all: every attempt for {@link
   * #unreachableTimeout} refused the connection or named a host that does not resolve. Nodes that
   * answer anything (an election in progress, not the leader yet) keep the call waiting up to the
   * call timeout.
   */
  private CompletableFuture<Response> failingFastWhenUnreachable(CompletableFuture<Response> sent) {
    CompletableFuture<Response> bounded = new CompletableFuture<>();
    unanswered.put(bounded, System.nanoTime());
    sent.whenComplete(
        (response, error) -> {
          unanswered.remove(bounded);
          if (error != null) {
            bounded.completeExceptionally(error);
          } else {
            bounded.complete(response);
          }
        });
    return bounded;
  }

  /** Runs on the scheduler: fails the calls that have found no reachable node for the bound. */
  private void failUnreachableCalls() {
    if (unanswered.isEmpty()) {
      return;
    }
    for (Map.Entry<CompletableFuture<Response>, Long> call : unanswered.entrySet()) {
      if (reachability.unreachable(call.getValue(), unreachableTimeout)) {
        if (unanswered.remove(call.getKey()) != null) {
          call.getKey()
              .completeExceptionally(
                  new UnreachableException(
                      "no node reachable within "
                          + unreachableTimeout.toMillis()
                          + " ms ("
                          + reachability.lastRefusal()
                          + ") at "
                          + peerList()));
        }
      }
    }
  }

  private String peerList() {
    StringBuilder s = new StringBuilder();
    for (PeerAddress p : config.peers()) {
      if (s.length() > 0) {
        s.append(',');
      }
      s.append(p.host()).append(':').append(p.port());
    }
    return s.toString();
  }

  /** No node could be reached at all; its message is the one line the caller sees. */
  private static final class UnreachableException extends Exception {
    private static final long serialVersionUID = 1L;

    UnreachableException(String message) {
      super(message, null, false, false);
    }
  }

  private CompletableFuture<Response> query(Request request, ReadConsistency consistency) {
    Request sent = consistency == ReadConsistency.STALE ? stale(request) : request;
    CompletableFuture<ClientPortTransport.Answer> answer =
        consistency == ReadConsistency.STALE
            ? port.callAnyNode(sent, callTimeout.toMillis())
            : port.call(sent, callTimeout.toMillis(), null);
    return metrics.timed(
        request.getCommandCase(),
        settle(
            failingFastWhenUnreachable(answer.thenApply(ClientPortTransport.Answer::response))
                .orTimeout(callTimeout.toMillis(), TimeUnit.MILLISECONDS),
            false));
  }

  /** {@code request} asked with CONSISTENCY_STALE, for any node to answer. */
  private static Request stale(Request request) {
    var stale = dev.fencekeeper.proto.Consistency.CONSISTENCY_STALE;
    return switch (request.getCommandCase()) {
      case READ ->
          request.toBuilder().setRead(request.getRead().toBuilder().setConsistency(stale)).build();
      case LEASE ->
          request.toBuilder()
              .setLease(request.getLease().toBuilder().setConsistency(stale))
              .build();
      case VALIDATE ->
          request.toBuilder()
              .setValidate(request.getValidate().toBuilder().setConsistency(stale))
              .build();
      case LIST ->
          request.toBuilder().setList(request.getList().toBuilder().setConsistency(stale)).build();
      default -> request;
    };
  }

  /**
   * One command (or a batch of them, see CommandCoalescer) through the client port, to the leader.
   * A waiting acquire goes as a batch of one, which the leader answers at once (WAITING or granted)
   * rather than holding the call: {@link Waiting} re-sends it and follows its grant itself.
   */
  private CompletableFuture<Response> sendThroughPort(Request request) {
    boolean waitingAcquire =
        request.getCommandCase() == Request.CommandCase.ACQUIRE
            && request.getAcquire().getWaitMs() > 0;
    Request sent =
        waitingAcquire
            ? Request.newBuilder()
                .setBatch(dev.fencekeeper.proto.BatchRequest.newBuilder().addRequests(request))
                .build()
            : request;
    try {
      return port.call(sent, callTimeout.toMillis(), null)
          .thenApply(
              answer -> {
                Response r = answer.response();
                return waitingAcquire
                        && r.getCode() == dev.fencekeeper.proto.ResultCode.BATCH_ANSWERED
                        && r.getBatchCount() == 1
                    ? r.getBatch(0)
                    : r;
              });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Turns failures into results: every answer a node gave, refusals included, arrives as a
   * response; a failure means no node answered in time (UNAVAILABLE) — for a command, with an
   * unknown outcome.
   */
  private CompletableFuture<Response> settle(CompletableFuture<Response> sent, boolean command) {
    return sent.handle(
        (response, error) -> {
          if (error == null) {
            reachability.contact();
            connectionIs(ConnectionState.CONNECTED);
            return response;
          }
          Throwable cause =
              error instanceof CompletionException && error.getCause() != null
                  ? error.getCause()
                  : error;
          connectionIs(ConnectionState.DISCONNECTED);
          return Response.newBuilder()
              .setCode(dev.fencekeeper.proto.ResultCode.UNAVAILABLE)
              .setMessage(
                  (cause instanceof TimeoutException
                          ? "no node answered in time"
                              + (cause.getMessage() == null ? "" : ": " + cause.getMessage())
                          : cause instanceof UnreachableException
                                  || cause instanceof ClientPortTransport.CallFailed
                              ? cause.getMessage()
                              : "cluster unavailable: " + cause)
                      + (command ? "; the command may or may not have been applied" : ""))
              .build();
        });
  }

  /**
   * A request id no other call of any client has used: this client's random prefix and a counter.
   * Cheaper than a random UUID per write, whose SecureRandom is shared by every thread of the
   * process.
   */
  private String freshRequestId() {
    return requestIdPrefix + Long.toString(requestIdCounter.incrementAndGet(), 36);
  }

  /**
   * Waits for {@code future}, interruptibly: an interrupt cancels it (which gives up a place in
   * line and releases a grant that arrives later), keeps the thread's interrupt status, and throws
   * {@link CancellationException}.
   */
  static <T> T join(CompletableFuture<T> future) {
    try {
      return future.get();
    } catch (InterruptedException e) {
      future.cancel(true);
      Thread.currentThread().interrupt();
      CancellationException cancelled =
          new CancellationException("interrupted while waiting for the cluster");
      cancelled.initCause(e);
      throw cancelled;
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof CompletionException && cause.getCause() != null) {
        cause = cause.getCause();
      }
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new CompletionException(cause);
    }
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /**
   * Runs {@code task} after {@code delay} on a sending thread, never on the scheduler itself: a
   * send may block (opening a channel, a TLS handshake), and the scheduler's one thread also times
   * every lease's deadline.
   */
  java.util.concurrent.ScheduledFuture<?> later(Runnable task, long delay, TimeUnit unit) {
    return scheduler.schedule(
        () -> {
          try {
            sendExecutor.execute(task);
          } catch (RejectedExecutionException e) {
            LOG.debug("Not run, the client is closed: {}", task);
          }
        },
        delay,
        unit);
  }

  private void awaitInFlight(long deadlineNanos) {
    while (!inFlight.isEmpty()) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        return;
      }
      try {
        CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0]))
            .get(left, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (ExecutionException | TimeoutException | CancellationException e) {
        // Failures are settled by each call; the loop re-checks what is still in flight.
        if (e instanceof TimeoutException) {
          return;
        }
      }
    }
  }

  /**
   * Gives up every waiting acquire, releases every lease this client still holds (not the abandoned
   * ones), and closes the connections. Waits for those answers at most the close timeout ({@link
   * Builder#closeTimeout}, 5 s by default); a lease whose release is not answered by then expires
   * by its TTL. Listeners are not told of leases released here.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closing) {
        return;
      }
      closing = true;
    }
    long deadline = System.nanoTime() + closeTimeout.toNanos();
    for (Waiting w : openWaits) {
      w.abandon();
    }
    // Acquires in flight: a grant that still arrives is released by deliver() and tracked.
    awaitInFlight(deadline);
    for (Lease lease : List.copyOf(held)) {
      track(lease.closeAsync());
    }
    awaitInFlight(deadline);
    if (!inFlight.isEmpty()) {
      LOG.warn(
          "Closed with {} release(s) or cancel(s) unanswered after {} ms; those leases expire by"
              + " their TTL",
          inFlight.size(),
          closeTimeout.toMillis());
    }
    scheduler.shutdownNow();
    sendExecutor.shutdown();
    if (ownedCallbackExecutor != null) {
      ownedCallbackExecutor.shutdown();
    }
    session.close();
    port.close();
  }

  /**
   * Settings of a new {@link FencingClient}. Name the cluster with {@link #peers} or {@link
   * #config}; everything else has a default.
   *
   * <pre>{@code
   * FencingClient client = FencingClient.builder()
   *     .peers("10.0.0.1:7301,10.0.0.2:7301,10.0.0.3:7301")
   *     .tls(Path.of("client.crt"), Path.of("client.key"), Path.of("ca.crt"))
   *     .owner("report-worker-7")
   *     .build();
   * }</pre>
   */
  public static final class Builder {
    private ClusterConfig config;
    private String peers;
    private String clusterName;
    private Security.TlsFiles tlsFiles;
    private javax.net.ssl.KeyManager keyManager;
    private javax.net.ssl.TrustManager trustManager;
    private Duration requestTimeout;
    private Duration callTimeout;
    private Duration unreachableTimeout = Duration.ofSeconds(3);
    private Duration closeTimeout = Duration.ofSeconds(5);
    private String owner;
    private Executor callbackExecutor;
    private com.codahale.metrics.MetricRegistry metricRegistry;

    private Builder() {}

    /**
     * The cluster's members: {@code host:port,...} (ids n1, n2, ... in order) or {@code
     * id@host:port,...}, as the nodes' {@code peers=} line lists them. Replaces a {@link #config}
     * given before.
     */
    public Builder peers(String commaSeparated) {
      this.peers = java.util.Objects.requireNonNull(commaSeparated, "peers");
      this.config = null;
      return this;
    }

    /**
     * The cluster's name (the nodes' {@code cluster.name}), from which its Raft group id derives;
     * needed with {@link #peers} when the nodes do not use the default name ({@code fencekeeper},
     * as {@code up} does).
     */
    public Builder clusterName(String name) {
      this.clusterName = java.util.Objects.requireNonNull(name, "clusterName");
      return this;
    }

    /**
     * A cluster description (e.g. {@code ClusterConfig.load(path)}), with its peers and TLS files.
     */
    public Builder config(ClusterConfig clusterConfig) {
      this.config = java.util.Objects.requireNonNull(clusterConfig, "config");
      this.peers = null;
      return this;
    }

    /**
     * Mutual TLS from PEM files: this client's certificate chain, its PKCS#8 key, the CA it trusts.
     */
    public Builder tls(
        java.nio.file.Path certificate,
        java.nio.file.Path privateKey,
        java.nio.file.Path trustedCa) {
      this.tlsFiles = new Security.TlsFiles(certificate, privateKey, trustedCa);
      this.keyManager = null;
      this.trustManager = null;
      return this;
    }

    /**
     * Mutual TLS from key stores: {@code keyStore} holds this client's key and certificate chain
     * (opened with {@code keyPassword}), {@code trustStore} the CA certificates it trusts for the
     * nodes.
     */
    public Builder tls(
        java.security.KeyStore keyStore, char[] keyPassword, java.security.KeyStore trustStore) {
      try {
        javax.net.ssl.KeyManagerFactory kmf =
            javax.net.ssl.KeyManagerFactory.getInstance(
                javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keyStore, keyPassword);
        javax.net.ssl.TrustManagerFactory tmf =
            javax.net.ssl.TrustManagerFactory.getInstance(
                javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trustStore);
        return tls(kmf.getKeyManagers()[0], tmf.getTrustManagers()[0]);
      } catch (java.security.GeneralSecurityException e) {
        throw new IllegalArgumentException(
            "cannot use the key stores for TLS: " + e.getMessage(), e);
      }
    }

    /**
     * Mutual TLS from a key manager and a trust manager — the parts an {@code SSLContext} is made
     * of (the gRPC transport builds its own TLS engine from them, so an {@code SSLContext} itself
     * cannot be used).
     */
    public Builder tls(javax.net.ssl.KeyManager keys, javax.net.ssl.TrustManager trust) {
      this.keyManager = java.util.Objects.requireNonNull(keys, "keys");
      this.trustManager = java.util.Objects.requireNonNull(trust, "trust");
      this.tlsFiles = null;
      return this;
    }

    /**
     * How long one attempt at one node may take (the cluster file's {@code client.request.timeout},
     * 3 s).
     */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = positive("requestTimeout", timeout);
      return this;
    }

    /**
     * How long one call may take in all, retries through an election included, before it is
     * answered {@code UNAVAILABLE}; default five request timeouts.
     */
    public Builder callTimeout(Duration timeout) {
      this.callTimeout = positive("callTimeout", timeout);
      return this;
    }

    /**
     * How soon a call is answered {@code UNAVAILABLE} when no node can be reached at all (every one
     * refuses the connection or its host does not resolve); default 3 s. Nodes that answer
     * anything, as during an election, keep a call waiting up to the call timeout instead.
     */
    public Builder unreachableTimeout(Duration timeout) {
      this.unreachableTimeout = positive("unreachableTimeout", timeout);
      return this;
    }

    /**
     * How long {@link FencingClient#close()} waits for the releases of the leases it holds; default
     * 5 s.
     */
    public Builder closeTimeout(Duration timeout) {
      this.closeTimeout = positive("closeTimeout", timeout);
      return this;
    }

    /**
     * Has no effect: every {@link Lease} a client holds gets its resource's events (a revoke, an
     * expiry) from the client's session, within about a second, at no cost per lease.
     *
     * @deprecated leases always learn of their end from the session; nothing to turn on or off
     */
    @Deprecated
    public Builder followLeaseEvents(boolean follow) {
      return this;
    }

    /**
     * The owner label of this client's leases, unless a call names one; default {@code host:pid}.
     */
    public Builder owner(String label) {
      this.owner = java.util.Objects.requireNonNull(label, "owner");
      return this;
    }

    /**
     * Where listeners registered without an executor run ({@link Lease#onLost(Consumer)}); default
     * a pool of daemon threads owned by the client. Never the thread that renews leases.
     */
    public Builder callbackExecutor(Executor executor) {
      this.callbackExecutor = java.util.Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * The registry the client's metrics go into (see {@link ClientMetrics}); default a registry of
     * its own.
     */
    public Builder metricRegistry(com.codahale.metrics.MetricRegistry registry) {
      this.metricRegistry = java.util.Objects.requireNonNull(registry, "registry");
      return this;
    }

    /** A client with these settings; it contacts nodes only when the first call is made. */
    public FencingClient build() {
      if (config == null && peers == null) {
        throw new IllegalStateException("name the cluster: peers(...) or config(...)");
      }
      return create(this);
    }

    ClusterConfig effectiveConfig() {
      ClusterConfig base = config != null ? config : ClusterConfig.forPeers(peers);
      if (requestTimeout != null || clusterName != null) {
        java.util.Properties p = base.toProperties();
        if (requestTimeout != null) {
          p.setProperty("client.request.timeout", requestTimeout.toMillis() + "ms");
        }
        if (clusterName != null) {
          p.setProperty("cluster.name", clusterName);
        }
        base = ClusterConfig.fromProperties(p);
      }
      if (tlsFiles != null) {
        base = base.withSecurity(base.security().withTls(tlsFiles));
      }
      return base;
    }

    org.apache.ratis.conf.Parameters ratisParameters(ClusterConfig effective) {
      if (keyManager == null) {
        return effective.ratisParameters();
      }
      org.apache.ratis.conf.Parameters p = new org.apache.ratis.conf.Parameters();
      org.apache.ratis.grpc.GrpcConfigKeys.TLS.setConf(
          p, new org.apache.ratis.grpc.GrpcTlsConfig(keyManager, trustManager, true));
      return p;
    }

    private static Duration positive(String name, Duration d) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, was " + d);
      }
      return d;
    }
  }
}
