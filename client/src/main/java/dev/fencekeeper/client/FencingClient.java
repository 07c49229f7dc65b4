package dev.fencekeeper.client;

import dev.fencekeeper.client.wire.LeaderRejection;
import dev.fencekeeper.client.wire.WaiterWakeups;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.CommonPool;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.ValidateRequest;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.proto.WriteRequest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.ExponentialBackoffRetry;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.TimeDuration;
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
 * <p>Every call has a {@code CompletableFuture} twin ({@code ...Async}). Leader changes are absorbed
 * here: Ratis redirects and retries commands (its retry cache answers a retried command without applying
 * it again), and every write carries a request id so that even a retry the cache no longer remembers is
 * applied at most once. Reads that fail during an election are retried too.
 */
public final class FencingClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FencingClient.class);
  private static final int READ_ATTEMPTS = 20;
  private static final long READ_RETRY_SLEEP_MS = 50;
  // A full leader queue is retried a few times, 50 ms doubling to 800 ms (about 1.5 s in all), then
  // reported as OVERLOADED: beyond that, waiting longer only adds to the load.
  private static final RetryPolicy OVERLOAD_RETRIES = ExponentialBackoffRetry.newBuilder()
      .setBaseSleepTime(TimeDuration.valueOf(50, TimeUnit.MILLISECONDS))
      .setMaxSleepTime(TimeDuration.valueOf(800, TimeUnit.MILLISECONDS))
      .setMaxAttempts(6)
      .build();
  // How often a queued acquire is re-sent: well inside the cluster's waiter-liveness window (10 s default).
  private static final long WAITER_RESEND_MS = 1_000;
  private static final int DEFAULT_ENTRIES_IN_FLIGHT = 2;
  private static final java.util.concurrent.atomic.AtomicBoolean commonPoolChecked =
      new java.util.concurrent.atomic.AtomicBoolean();

  private final ClusterConfig config;
  // Replaced when its ordered stream breaks (see replaceBroken); volatile so every sender sees the swap.
  private volatile RaftClient raft;
  private volatile boolean closed;
  private final long retryAttempts;
  private final String defaultOwner;
  private final Duration callTimeout;
  private final ScheduledExecutorService scheduler;
  private final Set<Waiting> openWaits = ConcurrentHashMap.newKeySet();
  // Ratis numbers one client's async requests in a single sequence and each node processes them in that
  // order, so a request aimed at one node (node info, a stale read) sent through `raft` leaves a gap in
  // the leader's sequence that stalls this client's commands until a retry seconds later. Such requests
  // go through a client of their node alone.
  private final Map<String, RaftClient> pinned = new ConcurrentHashMap<>();
  private final ClientMetrics metrics = new ClientMetrics();
  private final CommandCoalescer coalescer;
  private final String requestIdPrefix = UUID.randomUUID() + "-";
  private final java.util.concurrent.atomic.AtomicLong requestIdCounter = new java.util.concurrent.atomic.AtomicLong();

  private FencingClient(ClusterConfig config, String defaultOwner) {
    this.config = config;
    this.defaultOwner = defaultOwner;
    Duration requestTimeout = config.requestTimeout();
    // Long enough to ride out an election and a few slow attempts, short enough that a dead cluster is
    // reported rather than waited on forever.
    this.callTimeout = requestTimeout.multipliedBy(5);
    this.retryAttempts = Math.max(10, callTimeout.toMillis() / 50);
    this.raft = newOrderedClient();
    this.coalescer = new CommandCoalescer(this::sendThroughLog, entriesInFlight(),
        config.limits().maxRequestsPerBatch(), config.limits().maxValueBytes());
    this.scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "fencekeeper-client-renewals");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Log entries one client keeps outstanding before it coalesces further commands into batches. Two keep
   * the Raft pipeline busy while the next batch fills; more only make each batch smaller, and the cost is
   * per entry (docs/benchmarks.md, Coalescing). The system property exists for benchmarking.
   */
  private static int entriesInFlight() {
    return Math.max(1, Integer.getInteger("fencekeeper.client.entries-in-flight", DEFAULT_ENTRIES_IN_FLIGHT));
  }

  private RaftClient newOrderedClient() {
    return raftClientBuilder()
        .setRetryPolicy(metrics.counting(LeaderRejection.notRetried(LeaderRejection.backingOffWhenOverloaded(
            fixedSleepRetries(), OVERLOAD_RETRIES))))
        .build();
  }

  /** Every Raft client of this FencingClient starts here, so none can miss the cluster's TLS settings. */
  private RaftClient.Builder raftClientBuilder() {
    return RaftClient.newBuilder()
        .setRaftGroup(config.raftGroup())
        .setProperties(config.clientProperties())
        .setParameters(config.ratisParameters());
  }

  private RetryPolicy fixedSleepRetries() {
    return RetryPolicies.retryUpToMaximumCountWithFixedSleep(
        (int) retryAttempts, TimeDuration.valueOf(50, TimeUnit.MILLISECONDS));
  }

  /**
   * Once one ordered request runs out of retries (every node down for longer than the retry budget),
   * Ratis fails that client's ordered stream for good: every later request fails at once with
   * AlreadyClosedException. A long-lived client must outlive a full-cluster outage, so the broken Raft
   * client is replaced by a new one (a new client id; writes carry their own request ids, so dedup does
   * not depend on Ratis's retry cache). Only the first caller that sees {@code broken} replaces it.
   */
  private void replaceIfBroken(RaftClient broken, Throwable failure) {
    if (closed || !streamBroken(failure)) {
      return;
    }
    synchronized (this) {
      if (closed || raft != broken) {
        return;
      }
      raft = newOrderedClient();
    }
    LOG.info("Replaced the Raft client after its request stream failed: {}", failure.toString());
    // Closing waits for its channels to drain; never on a gRPC or caller thread.
    Thread closer = new Thread(() -> {
      try {
        broken.close();
      } catch (java.io.IOException | RuntimeException e) {
        LOG.debug("Closing the replaced Raft client failed", e);
      }
    }, "fencekeeper-client-close-replaced");
    closer.setDaemon(true);
    closer.start();
  }

  private static boolean streamBroken(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof org.apache.ratis.protocol.exceptions.RaftRetryFailureException
          || t instanceof org.apache.ratis.protocol.exceptions.AlreadyClosedException) {
        return true;
      }
    }
    return false;
  }

  /** Connects to the cluster described by {@code config}; nodes are contacted lazily. */
  public static FencingClient connect(ClusterConfig config) {
    return connect(config, defaultOwnerLabel());
  }

  /** As {@link #connect(ClusterConfig)}, labelling leases with {@code owner} unless a call names one. */
  public static FencingClient connect(ClusterConfig config, String owner) {
    if (!commonPoolChecked.getAndSet(true)) {
      CommonPool.threadPerStageWarning().ifPresent(w -> LOG.warn("Slower than it could be: {}", w));
    }
    return new FencingClient(config, owner);
  }

  private static String defaultOwnerLabel() {
    String host = System.getenv().getOrDefault("HOSTNAME", "localhost");
    return host + ":" + ProcessHandle.current().pid();
  }

  public ClusterConfig config() {
    return config;
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
   */
  public Lease acquire(String resource, Duration ttl) {
    return join(acquireAsync(resource, ttl, defaultOwner));
  }

  public Lease acquire(String resource, Duration ttl, String owner) {
    return join(acquireAsync(resource, ttl, owner));
  }

  public CompletableFuture<Lease> acquireAsync(String resource, Duration ttl) {
    return acquireAsync(resource, ttl, defaultOwner);
  }

  /**
   * Acquires {@code resource}, waiting up to {@code waitTimeout} for it to become free. Waiters are
   * served in arrival order; the queue is replicated, so a leader change keeps it.
   *
   * @throws LeaseHeldException if the wait ends first (the place in line is given up)
   */
  public Lease acquire(String resource, Duration ttl, Duration waitTimeout) {
    return join(acquireAsync(resource, ttl, waitTimeout, AcquireOptions.defaults().owner(defaultOwner)));
  }

  public CompletableFuture<Lease> acquireAsync(String resource, Duration ttl, Duration waitTimeout) {
    return acquireAsync(resource, ttl, waitTimeout, AcquireOptions.defaults().owner(defaultOwner));
  }

  /** The general form: owner, request id and lock-delay in {@code options}. */
  public Lease acquire(String resource, Duration ttl, Duration waitTimeout, AcquireOptions options) {
    return join(acquireAsync(resource, ttl, waitTimeout, options));
  }

  /** The general form: owner, request id and lock-delay in {@code options}. */
  public CompletableFuture<Lease> acquireAsync(
      String resource, Duration ttl, Duration waitTimeout, AcquireOptions options) {
    String requestId = options.requestId() != null ? options.requestId() : UUID.randomUUID().toString();
    String owner = options.owner() != null ? options.owner() : defaultOwner;
    Waiting waiting = new Waiting(resource, ttl, owner, requestId, options.lockDelay(),
        System.nanoTime() + waitTimeout.toNanos());
    openWaits.add(waiting);
    waiting.attempt();
    return waiting.result.whenComplete((lease, error) -> openWaits.remove(waiting));
  }

  /**
   * One blocking acquire: re-sends the same acquire (same request id) to stay queued, and learns of its grant
   * from the lease event that names its request id; gives its place up when the wait ends.
   */
  private final class Waiting {
    final String resource;
    final Duration ttl;
    final String owner;
    String requestId; // replaced when a grant ran out before this client heard of it
    final Duration lockDelay;
    final long waitUntilNanos;
    final CompletableFuture<Lease> result = new CompletableFuture<>();
    long watchIndex;
    int watchSeq = Integer.MAX_VALUE;
    volatile long lastSentNanos;
    // When the acquire last answered WAITING was sent: the grant came after the node queued it, so a lease
    // timed from here ends locally no later than in the cluster. 0 until an answer said WAITING.
    volatile long queuedSinceNanos;

    Waiting(String resource, Duration ttl, String owner, String requestId, Duration lockDelay, long waitUntilNanos) {
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
                      .setLockDelayMs(lockDelay.toMillis()))
              .build();
      command(request).thenApply(Result::new).whenComplete((r, e) -> onAnswer(r, e, sentNanos));
    }

    private void onAnswer(Result r, Throwable error, long sentNanos) {
      LOG.debug("Waiting for {} ({}): {} after {} ms", resource, requestId, error != null ? error : r,
          (System.nanoTime() - sentNanos) / 1_000_000);
      if (error != null) {
        result.completeExceptionally(error);
        return;
      }
      switch (r.code()) {
        case GRANTED -> {
          if (!r.live()) {
            // Granted while queued, but it ran out before this client heard of it (a stalled client, a
            // slow leader change): that lease is gone. Queue again rather than hand back a dead lease.
            LOG.debug("Grant {} of {} expired before it was picked up; queueing again", r.token(), resource);
            requestId = UUID.randomUUID().toString();
            attempt();
            return;
          }
          // A grant made while queued started before this request was sent: count only the time the
          // cluster says is left, from the send time.
          result.complete(new Lease(FencingClient.this, resource, owner, ttl, r.token(),
              leaseStart(sentNanos, r.expiresAtMs() - r.nowMs())));
        }
        case WAITING, UNAVAILABLE -> {
          if (r.code() == ResultCode.WAITING) {
            queuedSinceNanos = sentNanos;
            // Nothing before the entry that answered WAITING can be this waiter's grant (it would have answered
            // GRANTED), so the watch starts at that entry: a new waiter does not download the resource's
            // history, which cost each W6 hand-off an O(history) watch answer.
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
            result.completeExceptionally(new LeaseHeldException(r));
          } else {
            awaitChange(); // e.g. the wait was zero when sent; try again until the deadline
          }
        }
        default -> result.completeExceptionally(new FencingException(r));
      }
    }

    /**
     * Sleeps until an event on the resource that may concern this waiter, the re-send interval, or the end
     * of the wait. Events that cannot (another waiter's grant) only move the watch on: if every queued client
     * re-sent its acquire on every grant, each grant would cost one log entry per waiter, and the leader
     * would spend its time on re-sends instead of grants.
     */
    private void awaitChange() {
      long now = System.nanoTime();
      long leftMs = Math.max(1, (waitUntilNanos - now) / 1_000_000);
      long resendInMs = Math.max(1, (lastSentNanos + WAITER_RESEND_MS * 1_000_000 - now) / 1_000_000);
      long timeoutMs = Math.min(leftMs, resendInMs);
      watchOnce(WatchRequest.newBuilder().setResource(resource).setAfterIndex(watchIndex).setAfterSeq(watchSeq)
              .setTimeoutMs(timeoutMs).setWaiterRequestId(requestId).build())
          .whenComplete((w, e) -> {
            boolean moved = false;
            if (w != null && w.getAppliedIndex() > 0 && w.getCode() != ResultCode.COMPACTED) {
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
              scheduler.schedule(this::attempt, 50, TimeUnit.MILLISECONDS);
            } else if (moved && takeGrantFrom(w.getEventsList())) {
              return;
            } else if (moved && !WaiterWakeups.mayConcern(w.getEventsList(), requestId)
                && System.nanoTime() - lastSentNanos < WAITER_RESEND_MS * 1_000_000
                && System.nanoTime() < waitUntilNanos) {
              awaitChange();
            } else {
              attempt();
            }
          });
    }

    /**
     * Completes with the lease the events grant to this waiter, without the log entry a re-sent acquire
     * would cost: the event carries the token and the lease's length. False (re-send, as before) when they
     * grant nothing to it, when its lease already ended among them, or when this client cannot bound when
     * the grant started (no WAITING answer yet) or that bound leaves nothing of the lease.
     */
    private boolean takeGrantFrom(List<LeaseEvent> events) {
      LeaseEvent grant = null;
      for (LeaseEvent event : events) {
        if (event.getType() == LeaseEvent.Type.ACQUIRED
            && event.getRequestId().equals(requestId)) {
          grant = event;
        } else if (grant != null && event.getToken() == grant.getToken()
            && event.getType() != LeaseEvent.Type.RENEWED) {
          return false; // released, expired or revoked before this client heard of it
        }
      }
      long since = queuedSinceNanos;
      if (grant == null || since == 0) {
        return false;
      }
      long startNanos = leaseStart(since, grant.getExpiresAtMs() - grant.getAtMs());
      if (startNanos + ttl.toNanos() - System.nanoTime() < ttl.toNanos() / 2) {
        return false; // too little left by this client's reckoning; the re-sent acquire tells exactly
      }
      result.complete(new Lease(FencingClient.this, resource, owner, ttl, grant.getToken(), startNanos));
      return true;
    }

    /**
     * When, on this client's clock, to count the lease's TTL from: {@code boundNanos} is a moment no later
     * than the cluster's view of the grant, {@code leftMs} what the cluster said was left of the lease then.
     */
    private long leaseStart(long boundNanos, long leftMs) {
      return boundNanos - Duration.ofMillis(ttl.toMillis() - Math.min(leftMs, ttl.toMillis())).toNanos();
    }

    /** The wait is over: leave the queue (which also releases a grant that raced with giving up). */
    private void giveUp(Result last) {
      cancelWait(resource, requestId)
          .whenComplete((c, e) -> result.completeExceptionally(new LeaseHeldException(last)));
    }

    void abandon() {
      if (!result.isDone()) {
        cancelWait(resource, requestId);
        result.completeExceptionally(new FencingException(new Result(Response.newBuilder()
            .setCode(ResultCode.UNAVAILABLE).setMessage("client closed while waiting").build())));
      }
    }
  }

  private CompletableFuture<Response> cancelWait(String resource, String requestId) {
    return command(Request.newBuilder()
        .setCancelWait(CancelWaitRequest.newBuilder().setResource(resource).setRequestId(requestId))
        .build());
  }

  public CompletableFuture<Lease> acquireAsync(String resource, Duration ttl, String owner) {
    // The local deadline counts from before the request leaves, so it can only be early, never late.
    long sentNanos = System.nanoTime();
    return tryAcquireAsync(resource, ttl, owner)
        .thenApply(
            result -> {
              if (result.code() == ResultCode.GRANTED) {
                return new Lease(this, resource, owner, ttl, result.token(), sentNanos);
              }
              if (result.code() == ResultCode.HELD) {
                throw new LeaseHeldException(result);
              }
              throw new FencingException(result);
            });
  }

  // -----------------------------------------------------------------------------------------------
  // Raw commands: one request each, no background work. For tools and callers managing tokens.

  /** One acquire attempt: GRANTED with a token, or HELD naming the holder. Nothing renews it. */
  public Result tryAcquire(String resource, Duration ttl, String owner) {
    return join(tryAcquireAsync(resource, ttl, owner));
  }

  public CompletableFuture<Result> tryAcquireAsync(String resource, Duration ttl, String owner) {
    return tryAcquireAsync(resource, ttl, AcquireOptions.defaults().owner(owner));
  }

  /**
   * One acquire attempt with options. Every attempt carries a request id (generated when the options
   * name none), so a retry after a lost reply returns the same lease instead of a second one.
   */
  public Result tryAcquire(String resource, Duration ttl, AcquireOptions options) {
    return join(tryAcquireAsync(resource, ttl, options));
  }

  public CompletableFuture<Result> tryAcquireAsync(String resource, Duration ttl, AcquireOptions options) {
    Request request =
        Request.newBuilder()
            .setAcquire(
                AcquireRequest.newBuilder()
                    .setResource(resource)
                    .setOwner(options.owner() == null ? defaultOwner : options.owner())
                    .setTtlMs(ttl.toMillis())
                    .setRequestId(options.requestId() == null ? UUID.randomUUID().toString() : options.requestId())
                    .setLockDelayMs(options.lockDelay().toMillis()))
            .build();
    return command(request).thenApply(Result::new);
  }

  /** Renews lease {@code token}; a null {@code ttl} keeps the lease's own TTL. */
  public Result renew(String resource, long token, Duration ttl) {
    return join(renewAsync(resource, token, ttl));
  }

  public CompletableFuture<Result> renewAsync(String resource, long token, Duration ttl) {
    RenewRequest.Builder renew = RenewRequest.newBuilder().setResource(resource).setToken(token);
    if (ttl != null) {
      renew.setTtlMs(ttl.toMillis());
    }
    return command(Request.newBuilder().setRenew(renew).build()).thenApply(Result::new);
  }

  public Result release(String resource, long token) {
    return join(releaseAsync(resource, token));
  }

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
   * Changes every key in {@code changes} atomically, fenced by {@code token}. {@code requestId} makes a
   * retry of the same logical write safe; when null, a fresh id is generated for this call (its own
   * transport retries are still deduplicated).
   */
  public WriteResult write(String resource, long token, List<KeyChange> changes, String requestId) {
    return join(writeAsync(resource, token, changes, requestId));
  }

  public CompletableFuture<WriteResult> writeAsync(
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
              // Copied: a coalesced write is serialized after this method returns, when the caller may
              // already be reusing its array.
              .setValue(ByteString.copyFrom(change.value()))
              .setDelete(change.delete()));
    }
    return command(Request.newBuilder().setWrite(write).build()).thenApply(WriteResult::new);
  }

  // -----------------------------------------------------------------------------------------------
  // Queries.

  public ReadResult read(String resource, String key) {
    return read(resource, key, ReadConsistency.LINEARIZABLE);
  }

  public ReadResult read(String resource, String key, ReadConsistency consistency) {
    return join(readAsync(resource, key, consistency));
  }

  public CompletableFuture<ReadResult> readAsync(
      String resource, String key, ReadConsistency consistency) {
    Request request =
        Request.newBuilder().setRead(ReadRequest.newBuilder().setResource(resource).setKey(key)).build();
    return query(request, consistency).thenApply(ReadResult::new);
  }

  /** The live lease of {@code resource}, if any, and the newest token issued for it. */
  public Result lease(String resource) {
    return join(leaseAsync(resource));
  }

  public CompletableFuture<Result> leaseAsync(String resource) {
    Request request =
        Request.newBuilder().setLease(LeaseQuery.newBuilder().setResource(resource)).build();
    return query(request, ReadConsistency.LINEARIZABLE).thenApply(Result::new);
  }

  /**
   * Whether {@code token} is the live lease of {@code resource}: CURRENT, STALE or EXPIRED (UNKNOWN_TOKEN
   * if never issued) — for services that fence their own writes with fencekeeper's tokens.
   */
  public Result validate(String resource, long token) {
    return join(validateAsync(resource, token));
  }

  public CompletableFuture<Result> validateAsync(String resource, long token) {
    Request request =
        Request.newBuilder()
            .setValidate(ValidateRequest.newBuilder().setResource(resource).setToken(token))
            .build();
    return query(request, ReadConsistency.LINEARIZABLE).thenApply(Result::new);
  }

  /**
   * One page of resources whose name starts with {@code prefix} (with their live lease, if any), after
   * {@code after} in name order; {@code Result.toProto().getMore()} says whether another page follows.
   */
  public Result listLeases(String prefix, String after, int limit) {
    return send(Request.newBuilder()
        .setList(ListRequest.newBuilder().setWhat(ListRequest.What.LEASES).setPrefix(prefix).setAfter(after)
            .setLimit(limit))
        .build());
  }

  /** One page of the keys of {@code resource} starting with {@code prefix}, after {@code after}. */
  public Result listKeys(String resource, String prefix, String after, int limit) {
    return send(Request.newBuilder()
        .setList(ListRequest.newBuilder().setWhat(ListRequest.What.KEYS).setResource(resource).setPrefix(prefix)
            .setAfter(after).setLimit(limit))
        .build());
  }

  /**
   * Writes a consistent copy of the whole state — leases, values, receipts and the token sequence — to
   * {@code file} (replaced atomically). The answer carries the backup's size in {@code totalBytes}, its
   * newest token in {@code currentToken()} and its resource count in {@code version()}. Seed a new cluster
   * from it with {@code fencekeeper restore}.
   */
  public Result backup(java.nio.file.Path file) {
    java.nio.file.Path tmp = file.resolveSibling(file.getFileName() + ".partial");
    try (java.io.OutputStream out = java.nio.file.Files.newOutputStream(tmp)) {
      Result first = send(Request.newBuilder().setBackup(BackupRequest.getDefaultInstance()).build());
      if (first.code() != ResultCode.FOUND) {
        return first;
      }
      Response r = first.toProto();
      first.toProto().getChunk().writeTo(out);
      long written = r.getChunk().size();
      while (written < r.getTotalBytes()) {
        Result next = send(Request.newBuilder()
            .setBackup(BackupRequest.newBuilder().setBackupId(r.getBackupId()).setOffset(written))
            .build());
        if (next.code() != ResultCode.FOUND || next.toProto().getChunk().isEmpty()) {
          return next;
        }
        next.toProto().getChunk().writeTo(out);
        written += next.toProto().getChunk().size();
      }
      out.close();
      java.nio.file.Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      return new Result(r.toBuilder().clearChunk().build());
    } catch (java.io.IOException e) {
      return new Result(Response.newBuilder().setCode(ResultCode.INTERNAL)
          .setMessage("cannot write " + file + ": " + e.getMessage()).build());
    }
  }

  /**
   * Ends the live lease of {@code resource} whoever holds it (operator action). The holder's later
   * writes are rejected and its {@link Lease} reports the loss.
   */
  public Result revoke(String resource, String reason) {
    return join(command(Request.newBuilder()
            .setRevoke(RevokeRequest.newBuilder().setResource(resource).setReason(reason == null ? "" : reason))
            .build())
        .thenApply(Result::new));
  }

  /**
   * Watches lease events on one resource ({@code prefix == false}) or on every resource starting with
   * {@code name}, delivering them to {@code listener} in commit order from the position after ({@code
   * afterIndex}, {@code afterSeq}); pass {@link Watch#FROM_NOW} to start with the next event. Resumes by
   * itself after errors and leader changes, without gaps or duplicates.
   */
  public Watch watch(String name, boolean prefix, long afterIndex, Consumer<LeaseEvent> listener) {
    return new Watch(this, name, prefix, afterIndex, listener);
  }

  CompletableFuture<Response> watchOnce(WatchRequest request) {
    Message message = message(Request.newBuilder().setWatch(request).build());
    try {
      // Unordered: a long-poll must not hold up this client's other requests behind it.
      return raft.async().sendReadOnlyUnordered(message).thenApply(FencingClient::parseReply);
    } catch (RuntimeException e) {
      // Failing the future keeps every caller's retry loop alive; a throw would end it silently.
      return CompletableFuture.failedFuture(e);
    }
  }

  /** What node {@code peerId} says about itself; fails if it does not answer within {@code timeout}. */
  public NodeInfo nodeInfo(String peerId, Duration timeout) {
    Request request = Request.newBuilder().setNodeInfo(NodeInfoQuery.getDefaultInstance()).build();
    CompletableFuture<Response> f =
        pinnedTo(peerId).async()
            .sendStaleRead(message(request), 0, RaftPeerId.valueOf(peerId))
            .thenApply(FencingClient::parseReply);
    return join(f.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)).getNode();
  }

  /**
   * Sends any request envelope as built by the caller: queries as linearizable reads, everything else
   * through the log. For tools and tests that need the wire's full range, malformed input included.
   */
  public Result send(Request request) {
    return join(sendAsync(request));
  }

  public CompletableFuture<Result> sendAsync(Request request) {
    boolean query =
        switch (request.getCommandCase()) {
          case READ, LEASE, VALIDATE, LIST, BACKUP -> true;
          default -> false;
        };
    return (query ? query(request, ReadConsistency.LINEARIZABLE) : command(request)).thenApply(Result::new);
  }

  // -----------------------------------------------------------------------------------------------
  // Transport.

  CompletableFuture<Response> command(Request request) {
    CompletableFuture<Response> sent = coalescer.submit(request);
    return metrics.timed(request.getCommandCase(),
        settle(sent.orTimeout(callTimeout.toMillis(), TimeUnit.MILLISECONDS), true));
  }

  /** One Raft message through the ordered stream: a command, or a batch of them (see CommandCoalescer). */
  private CompletableFuture<Response> sendThroughLog(Request request) {
    CompletableFuture<Response> sent;
    RaftClient ordered = raft;
    try {
      sent = ordered.async().send(message(request)).thenApply(this::parseLeaderReply);
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    sent.whenComplete((response, error) -> {
      if (error != null) {
        replaceIfBroken(ordered, error);
      }
    });
    return sent;
  }

  private Response parseLeaderReply(RaftClientReply reply) {
    if (reply.isSuccess()) {
      metrics.answeredBy(reply.getServerId());
    }
    return parseReply(reply);
  }

  private CompletableFuture<Response> query(Request request, ReadConsistency consistency) {
    Supplier<CompletableFuture<Response>> attempt =
        consistency == ReadConsistency.LINEARIZABLE
            ? () -> {
              RaftClient ordered = raft;
              CompletableFuture<Response> read =
                  ordered.async().sendReadOnly(message(request)).thenApply(this::parseLeaderReply);
              read.whenComplete((response, error) -> {
                if (error != null) {
                  replaceIfBroken(ordered, error);
                }
              });
              return read;
            }
            : () -> {
              List<PeerAddress> peers = config.peers();
              PeerAddress peer = peers.get(ThreadLocalRandom.current().nextInt(peers.size()));
              return pinnedTo(peer.id()).async()
                  .sendStaleRead(message(request), 0, RaftPeerId.valueOf(peer.id()))
                  .thenApply(FencingClient::parseReply);
            };
    return metrics.timed(request.getCommandCase(),
        settle(retrying(attempt, READ_ATTEMPTS).orTimeout(callTimeout.toMillis(), TimeUnit.MILLISECONDS), false));
  }

  /**
   * Ratis retries commands itself but hands read failures (read index unavailable during an election,
   * an unreachable replica) straight back; reads have no side effects, so retry them here.
   */
  private CompletableFuture<Response> retrying(Supplier<CompletableFuture<Response>> attempt, int attemptsLeft) {
    CompletableFuture<Response> result = new CompletableFuture<>();
    attempt
        .get()
        .whenComplete(
            (response, error) -> {
              if (error == null) {
                result.complete(response);
              } else if (attemptsLeft <= 1 || LeaderRejection.decode(error).isPresent()) {
                result.completeExceptionally(error);
              } else {
                LOG.debug("Read failed, retrying: {}", error.toString());
                scheduler.schedule(
                    () -> retrying(attempt, attemptsLeft - 1).whenComplete((r, e) -> {
                      if (e == null) {
                        result.complete(r);
                      } else {
                        result.completeExceptionally(e);
                      }
                    }),
                    READ_RETRY_SLEEP_MS, TimeUnit.MILLISECONDS);
              }
            });
    return result;
  }

  /**
   * Turns failures into results: a rejection a node made before logging carries its full response;
   * anything else means no node answered in time (UNAVAILABLE) — for a command, with an unknown outcome.
   */
  private static CompletableFuture<Response> settle(CompletableFuture<Response> sent, boolean command) {
    return sent.handle(
        (response, error) -> {
          if (error == null) {
            return response;
          }
          Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
          return LeaderRejection.decode(cause)
              .orElseGet(
                  () ->
                      Response.newBuilder()
                          .setCode(ResultCode.UNAVAILABLE)
                          .setMessage((cause instanceof TimeoutException
                              ? "no node answered in time"
                              : "cluster unavailable: " + cause)
                              + (command ? "; the command may or may not have been applied" : ""))
                          .build());
        });
  }

  /** The client for requests aimed at node {@code peerId} only; it retries as the main client does. */
  private RaftClient pinnedTo(String peerId) {
    return pinned.computeIfAbsent(peerId, id -> raftClientBuilder()
        .setLeaderId(RaftPeerId.valueOf(id))
        .setRetryPolicy(fixedSleepRetries())
        .build());
  }

  /**
   * A request id no other call of any client has used: this client's random prefix and a counter. Cheaper
   * than a random UUID per write, whose SecureRandom is shared by every thread of the process.
   */
  private String freshRequestId() {
    return requestIdPrefix + Long.toString(requestIdCounter.incrementAndGet(), 36);
  }

  private static Message message(Request request) {
    return Message.valueOf(UnsafeByteOperations.unsafeWrap(request.toByteArray()));
  }

  private static Response parseReply(RaftClientReply reply) {
    if (!reply.isSuccess()) {
      throw new CompletionException(reply.getException());
    }
    try {
      return Response.parseFrom(reply.getMessage().getContent().asReadOnlyByteBuffer());
    } catch (InvalidProtocolBufferException e) {
      throw new CompletionException(e);
    }
  }

  static <T> T join(CompletableFuture<T> future) {
    try {
      return future.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw e;
    }
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  @Override
  public void close() {
    for (Waiting w : openWaits) {
      w.abandon();
    }
    scheduler.shutdownNow();
    synchronized (this) {
      closed = true; // no replacement of the Raft client after this point
    }
    for (RaftClient client : pinned.values()) {
      try {
        client.close();
      } catch (java.io.IOException e) {
        LOG.debug("Closing a node's Raft client failed", e);
      }
    }
    try {
      raft.close();
    } catch (java.io.IOException e) {
      LOG.debug("Closing the Raft client failed", e);
    }
  }
}
