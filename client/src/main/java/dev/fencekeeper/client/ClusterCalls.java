package dev.fencekeeper.client;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
import org.apache.ratis.thirdparty.com.google.protobuf.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How one {@link FencingClient}'s calls reach the cluster over the nodes' client ports, each as its
 * own call of {@code fencekeeper.v1} ({@link Rpc}): commands through the {@link CommandCoalescer}
 * to the leader, queries to the leader or (stale) to any node, each bounded by the call timeout and
 * failed early when no node can be reached at all, and every failure settled into an UNAVAILABLE
 * answer. What the calls see of the cluster is the client's {@link ConnectionState}. Owns the
 * client's threads.
 */
final class ClusterCalls {
  private static final Logger LOG = LoggerFactory.getLogger(FencingClient.class);

  /**
   * The connection-state changes, on a logger of their own so that a caller can tune them apart.
   */
  private static final Logger CONNECTION_LOG =
      LoggerFactory.getLogger("dev.fencekeeper.client.connection");

  private static final int DEFAULT_CALLS_IN_FLIGHT = 2;

  private final ClusterConfig config;
  private final ClientPortTransport port;
  private final Duration callTimeout;
  private final Duration unreachableTimeout;
  private final ScheduledExecutorService scheduler;
  private final ExecutorService sendExecutor;
  private final Executor callbackExecutor;
  private final ExecutorService ownedCallbackExecutor; // null when the application gave its own
  private final Reachability reachability = new Reachability();
  // Calls not answered yet, with when they started: failed fast when no node can be reached at all.
  private final Map<CompletableFuture<Response>, Long> unanswered = new ConcurrentHashMap<>();
  private volatile ConnectionState connectionState = ConnectionState.CONNECTING;
  private final List<Map.Entry<Executor, Consumer<ConnectionState>>> connectionListeners =
      new CopyOnWriteArrayList<>();
  private final ClientMetrics metrics;
  private final CommandCoalescer coalescer;

  ClusterCalls(ClusterConfig config, FencingClient.Builder settings) {
    this.config = config;
    // Long enough to ride out an election and a few slow attempts, short enough that a dead cluster
    // is reported rather than waited on forever.
    this.callTimeout =
        settings.callTimeout != null
            ? settings.callTimeout
            : config.requestTimeout().multipliedBy(5);
    this.unreachableTimeout = settings.unreachableTimeout;
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
    // Also the channels' executor. A call abandoned as the client closes may still deliver its end
    // after these threads have stopped: it is then run on the delivering thread (answers are never
    // handled on a thread that may block), not rejected into an uncaught exception on stderr.
    this.sendExecutor =
        new java.util.concurrent.ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            60,
            TimeUnit.SECONDS,
            new java.util.concurrent.SynchronousQueue<>(),
            r -> {
              Thread t = new Thread(r, "fencekeeper-client-send-" + sender.incrementAndGet());
              t.setDaemon(true);
              return t;
            },
            (task, pool) -> task.run());
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
            ClientSettings.sslContext(config, settings),
            config.requestTimeout().toMillis(),
            reachability,
            metrics,
            scheduler,
            sendExecutor);
    this.coalescer =
        new CommandCoalescer(
            call ->
                port.call(call, callTimeout.toMillis(), null)
                    .thenApply(ClientPortTransport.Answer::response),
            callsInFlight(),
            config.limits().maxRequestsPerBatch(),
            config.limits().maxValueBytes());
    // Often enough that a call fails close to the bound it documents, not up to half a second past.
    long sweepMs = Math.max(20, Math.min(100, unreachableTimeout.toMillis() / 10));
    scheduler.scheduleWithFixedDelay(
        this::failUnreachableCalls, sweepMs, sweepMs, TimeUnit.MILLISECONDS);
  }

  /**
   * Command calls one client keeps outstanding before it coalesces further commands into Batch
   * calls. Two keep the leader's pipeline busy while the next batch fills; more only make each
   * batch smaller, and the cost is per call (docs/benchmarks.md). The system property exists for
   * benchmarking.
   */
  private static int callsInFlight() {
    return Math.max(
        1, Integer.getInteger("fencekeeper.client.entries-in-flight", DEFAULT_CALLS_IN_FLIGHT));
  }

  ClientPortTransport port() {
    return port;
  }

  ClientMetrics metrics() {
    return metrics;
  }

  Duration callTimeout() {
    return callTimeout;
  }

  Duration unreachableTimeout() {
    return unreachableTimeout;
  }

  Executor callbackExecutor() {
    return callbackExecutor;
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /** The cluster's own batch limits, once a node told them: the coalescer sizes batches by them. */
  void batchLimits(int commands, long valueBytes) {
    coalescer.limits(commands, valueBytes);
  }

  /**
   * True when, for the whole {@code unreachableTimeout} up to now, no node could be contacted and
   * connections were refused: nothing this client sent in that time reached a node. (An election,
   * where nodes answer but none leads, or a slow node is not this.)
   */
  boolean clusterUnreachable() {
    return reachability.unreachable(
        System.nanoTime() - unreachableTimeout.toNanos(), unreachableTimeout);
  }

  /** What the latest call saw of the cluster. */
  ConnectionState connectionState() {
    return connectionState;
  }

  /**
   * Calls {@code listener} on {@code executor} with every later change of {@link
   * #connectionState()}, in order. A change is noticed by a call: a renewal, or the application's
   * own.
   */
  void onConnectionStateChange(Executor executor, Consumer<ConnectionState> listener) {
    connectionListeners.add(Map.entry(executor, listener));
  }

  /**
   * Records what the latest call saw; {@code why} (for DISCONNECTED) is the failure that call
   * reported.
   */
  private void connectionIs(ConnectionState now, String why) {
    ConnectionState before;
    synchronized (connectionListeners) {
      before = connectionState;
      if (before == now) {
        return;
      }
      connectionState = now;
    }
    if (now == ConnectionState.DISCONNECTED) {
      CONNECTION_LOG.warn("No node of {} answered: {}", peerList(), why);
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
      connectionIs(ConnectionState.CONNECTED, "");
    } else {
      String refusal = reachability.lastRefusal();
      connectionIs(
          ConnectionState.DISCONNECTED,
          "the session stream did not open within "
              + unreachableTimeout.toMillis()
              + " ms"
              + (refusal.isEmpty() ? "" : " (" + refusal + ")"));
    }
  }

  /**
   * Sends a request envelope as a tool built it (see {@link dev.fencekeeper.client.wire.Wire}), as
   * the one call it names; an envelope that names none is answered INVALID_ARGUMENT, unsent.
   */
  CompletableFuture<Result> sendAsync(Request request) {
    Rpc.Call<?> call;
    try {
      call = Rpc.of(request);
    } catch (IllegalArgumentException e) {
      return CompletableFuture.completedFuture(
          new Result(
              Response.newBuilder()
                  .setCode(dev.fencekeeper.proto.ResultCode.INVALID_ARGUMENT)
                  .setMessage(e.getMessage() + "; nothing was sent")
                  .build()));
    }
    return send(call).thenApply(Result::new);
  }

  private <T extends Message> CompletableFuture<Response> send(Rpc.Call<T> call) {
    return call.rpc().command ? command(call.rpc(), call.message()) : query(call, null);
  }

  /** A command, to the leader, alone or in a Batch call with others ({@link CommandCoalescer}). */
  <T extends Message> CompletableFuture<Response> command(Rpc<T> rpc, T message) {
    return command(rpc, message, System.nanoTime());
  }

  /**
   * A command on behalf of a call that began at {@code startedNanos}: its bounds (unreachable, call
   * timeout) count from then, so time the call spent before sending (learning the cluster's limits)
   * is not granted twice.
   */
  <T extends Message> CompletableFuture<Response> command(
      Rpc<T> rpc, T message, long startedNanos) {
    long leftMs =
        Math.max(
            1,
            callTimeout.toMillis()
                - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos));
    CompletableFuture<Response> sent = coalescer.submit(new Rpc.Call<>(rpc, message));
    return metrics.timed(
        rpc.name,
        settle(
            failingFastWhenUnreachable(sent, startedNanos).orTimeout(leftMs, TimeUnit.MILLISECONDS),
            true));
  }

  /** An acquire waiting on the leader ({@link #waitingAcquire}), and how to give it up. */
  record Waiting(CompletableFuture<Response> answer, Runnable giveUp) {}

  /**
   * An acquire that waits in line on the leader until {@code waitUntilNanos}: the call stays open
   * until the node answers it granted, or, the wait over, as the resource then stands (HELD,
   * WAITING, LOCK_DELAYED) with its place given up. Each attempt (after a leader change) sends what
   * is left of the wait, with the same request id, which keeps the place in line. {@link
   * Waiting#giveUp()} cancels the call, which makes the node give up the place too.
   */
  Waiting waitingAcquire(AcquireRequest acquire, long waitUntilNanos) {
    long startedNanos = System.nanoTime();
    long waitMs = Math.max(0, TimeUnit.NANOSECONDS.toMillis(waitUntilNanos - startedNanos));
    // No wait asked: a plain acquire, answered HELD at once while someone holds the resource. With
    // a wait, each attempt asks for what is left of it, at least 1 ms, so that a re-sent attempt
    // still finds its place in line.
    boolean waits = waitMs > 0;
    CompletableFuture<ClientPortTransport.Answer> call;
    try {
      call =
          port.command(
              Rpc.ACQUIRE,
              () ->
                  acquire.toBuilder()
                      .setWaitMs(
                          waits
                              ? Math.max(
                                  1,
                                  TimeUnit.NANOSECONDS.toMillis(waitUntilNanos - System.nanoTime()))
                              : 0)
                      .build(),
              waitMs + callTimeout.toMillis(),
              waitMs + port.requestTimeoutMs());
    } catch (RuntimeException e) {
      call = CompletableFuture.failedFuture(e);
    }
    CompletableFuture<ClientPortTransport.Answer> attempts = call;
    CompletableFuture<Response> answer =
        settle(
            failingFastWhenUnreachable(
                    attempts.thenApply(ClientPortTransport.Answer::response), startedNanos)
                .orTimeout(waitMs + callTimeout.toMillis(), TimeUnit.MILLISECONDS),
            true);
    return new Waiting(answer, () -> attempts.cancel(true));
  }

  /**
   * {@code sent}, failed early when no node can be reached at all: every attempt for {@link
   * #unreachableTimeout} refused the connection or named a host that does not resolve. Nodes that
   * answer anything (an election in progress, not the leader yet) keep the call waiting up to the
   * call timeout.
   */
  private CompletableFuture<Response> failingFastWhenUnreachable(CompletableFuture<Response> sent) {
    return failingFastWhenUnreachable(sent, System.nanoTime());
  }

  private CompletableFuture<Response> failingFastWhenUnreachable(
      CompletableFuture<Response> sent, long startedNanos) {
    CompletableFuture<Response> bounded = new CompletableFuture<>();
    unanswered.put(bounded, startedNanos);
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
    for (PeerAddress p : config.clientAddresses()) {
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

  /**
   * A query; its message asks for {@code consistency} itself. Linearizable ones go to the leader,
   * stale ones to any node.
   */
  <T extends Message> CompletableFuture<Response> query(
      Rpc<T> rpc, T message, ReadConsistency consistency) {
    return query(
        new Rpc.Call<>(rpc, message), consistency == ReadConsistency.STALE ? port.anyNode() : null);
  }

  /** {@code call} at {@code pinned} alone, or (null) wherever it is answered. */
  <T extends Message> CompletableFuture<Response> query(Rpc.Call<T> call, String pinned) {
    CompletableFuture<Response> answer;
    try {
      answer =
          port.call(call, callTimeout.toMillis(), pinned)
              .thenApply(ClientPortTransport.Answer::response);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    return metrics.timed(
        call.rpc().name,
        settle(
            failingFastWhenUnreachable(answer)
                .orTimeout(callTimeout.toMillis(), TimeUnit.MILLISECONDS),
            false));
  }

  /** How a query asks for {@code consistency}. */
  static dev.fencekeeper.proto.Consistency wire(ReadConsistency consistency) {
    return consistency == ReadConsistency.STALE
        ? dev.fencekeeper.proto.Consistency.CONSISTENCY_STALE
        : dev.fencekeeper.proto.Consistency.CONSISTENCY_LINEARIZABLE;
  }

  /** {@code answer} of a call routed by its caller, bounded and settled as a query's. */
  CompletableFuture<Response> settledQuery(CompletableFuture<Response> answer) {
    return settle(
        failingFastWhenUnreachable(answer).orTimeout(callTimeout.toMillis(), TimeUnit.MILLISECONDS),
        false);
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
            connectionIs(ConnectionState.CONNECTED, "");
            return response;
          }
          Throwable cause =
              error instanceof CompletionException && error.getCause() != null
                  ? error.getCause()
                  : error;
          String why =
              cause instanceof TimeoutException
                  ? "no node answered in time"
                      + (cause.getMessage() == null ? "" : ": " + cause.getMessage())
                  : cause instanceof UnreachableException
                          || cause instanceof ClientPortTransport.CallFailed
                      ? cause.getMessage()
                      : "cluster unavailable: " + cause;
          connectionIs(ConnectionState.DISCONNECTED, why);
          return Response.newBuilder()
              .setCode(dev.fencekeeper.proto.ResultCode.UNAVAILABLE)
              .setMessage(why + (command ? "; the command may or may not have been applied" : ""))
              .build();
        });
  }

  /** See {@link FencingClient#nodeStatus}. */
  NodeStatus nodeStatus(String peerId, Duration timeout) {
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
        info.getLeaderId(),
        info.getClusterId());
  }

  /**
   * What node {@code peerId} says about itself; fails if it does not answer within {@code timeout}.
   */
  NodeInfo nodeInfo(String peerId, Duration timeout) {
    String address = port.addressOf(peerId);
    if (address == null) {
      throw new IllegalArgumentException(
          "no member '"
              + peerId
              + "' in "
              + config.clientAddresses()
              + ": name one of its node ids");
    }
    Response answer =
        join(port.call(
                    new Rpc.Call<>(Rpc.NODE_INFO, NodeInfoQuery.getDefaultInstance()),
                    timeout.toMillis(),
                    address)
                .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS))
            .response();
    if (!answer.hasNode()) {
      // Refused rather than answered (a TLS handshake the node or this client refused).
      throw new FencingException(new Result(answer));
    }
    return answer.getNode();
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

  /**
   * Runs {@code task} after {@code delay} on a sending thread, never on the scheduler itself: a
   * send may block (opening a channel, a TLS handshake), and the scheduler's one thread also times
   * every lease's deadline.
   */
  java.util.concurrent.ScheduledFuture<?> later(Runnable task, long delay, TimeUnit unit) {
    return scheduler.schedule(
        () -> {
          if (sendExecutor.isShutdown()) {
            LOG.debug("Not run, the client is closed: {}", task);
          } else {
            sendExecutor.execute(task);
          }
        },
        delay,
        unit);
  }

  /** Stops the client's threads; a call still running finds its executor gone and fails. */
  void stopThreads() {
    scheduler.shutdownNow();
    sendExecutor.shutdown();
    if (ownedCallbackExecutor != null) {
      ownedCallbackExecutor.shutdown();
    }
  }

  /** Closes the connections to the nodes' client ports. */
  void closePort() {
    port.close();
  }
}
