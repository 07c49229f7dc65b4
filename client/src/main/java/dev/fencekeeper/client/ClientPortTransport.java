package dev.fencekeeper.client;

import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.proto.WatchRequest;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.ratis.thirdparty.com.google.protobuf.Message;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ClientCall;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.netty.NegotiationType;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The nodes' client ports and how a call reaches the right one: a channel per client address, the
 * leader as the last NOT_LEADER answer (or a leader-only answer) named it, and retries through
 * elections and dead nodes until the call's time is up. A command is re-sent unchanged, so its
 * request id makes a retry after a lost answer apply it at most once.
 */
final class ClientPortTransport implements AutoCloseable {
  /**
   * How long a call asked of one node alone keeps retrying while that node refuses connections: a
   * node coming up binds its port within it; a node that is down is reported then, not at the
   * call's timeout.
   */
  static final long PINNED_REFUSAL_BOUND_MS = 1000;

  private static final Logger LOG = LoggerFactory.getLogger(ClientPortTransport.class);
  // Values reach limits.value.max-bytes and backup chunks 4 MiB; an answer carries at most one.
  private static final int MAX_INBOUND_BYTES = 16 * 1024 * 1024;
  private static final int OVERLOADED_ATTEMPTS = 6;

  static {
    // Before the first channel: gRPC logs through java.util.logging from then on.
    TransportLogging.install();
  }

  private final List<PeerAddress> peers;
  private final SslContext ssl;
  private final long requestTimeoutMs;
  private final Reachability reachability;
  private final ClientMetrics metrics;
  private final ScheduledExecutorService timer;
  private final Executor executor;
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final AtomicInteger next = new AtomicInteger();
  private volatile String leader;
  private volatile boolean closed;

  /**
   * @param ssl the client's TLS context ({@link ClientTls}), null without TLS
   * @param executor where answers are handled: never a thread that may block
   */
  ClientPortTransport(
      List<PeerAddress> clientAddresses,
      SslContext ssl,
      long requestTimeoutMs,
      Reachability reachability,
      ClientMetrics metrics,
      ScheduledExecutorService timer,
      Executor executor) {
    if (clientAddresses.isEmpty()) {
      throw new IllegalArgumentException("the cluster names no peer");
    }
    this.peers = List.copyOf(clientAddresses);
    this.ssl = ssl;
    this.requestTimeoutMs = requestTimeoutMs;
    this.reachability = reachability;
    this.metrics = metrics;
    this.timer = timer;
    this.executor = executor;
  }

  /** An exception whose message is the one line the caller sees. */
  static final class CallFailed extends Exception {
    private static final long serialVersionUID = 1L;

    CallFailed(String message) {
      super(message, null, false, false);
    }
  }

  /** An answer and the client address of the node that gave it. */
  record Answer(Response response, String address) {}

  ManagedChannel channel(String address) {
    if (closed) {
      // A poll retried while close() runs must not open a channel nobody will close.
      throw new IllegalStateException("the client is closed");
    }
    return channels.computeIfAbsent(
        address,
        a -> {
          NettyChannelBuilder b =
              NettyChannelBuilder.forTarget(a)
                  .executor(executor)
                  .maxInboundMessageSize(MAX_INBOUND_BYTES)
                  // Idle connections are kept through NATs; the node permits a ping every 10 s.
                  .keepAliveTime(30, TimeUnit.SECONDS)
                  .keepAliveTimeout(10, TimeUnit.SECONDS);
          if (ssl != null) {
            b.sslContext(ssl).negotiationType(NegotiationType.TLS);
          } else {
            b.usePlaintext();
          }
          return b.build();
        });
  }

  /**
   * Connects to every node at once and completes when a majority of the connections are up, or when
   * each has come up or failed (a refused connection, a refused TLS handshake): the connection
   * set-up a caller's own deadline should not count. A node that accepts connections and never
   * answers (stopped, overloaded) does not hold it up once a majority is up. It never fails; the
   * calls that follow report what the connections met.
   */
  CompletableFuture<Void> dial() {
    CompletableFuture<Void> dialled = new CompletableFuture<>();
    AtomicInteger up = new AtomicInteger();
    AtomicInteger settled = new AtomicInteger();
    int majority = peers.size() / 2 + 1;
    for (PeerAddress peer : peers) {
      ManagedChannel channel = channel(peer.address());
      watchUntilSettled(
          channel,
          channel.getState(true),
          ready -> {
            if ((ready && up.incrementAndGet() >= majority)
                | settled.incrementAndGet() == peers.size()) {
              dialled.complete(null);
            }
          });
    }
    return dialled;
  }

  /**
   * Calls {@code onSettled} once, with whether the channel came up, when it is up or has failed.
   */
  private void watchUntilSettled(
      ManagedChannel channel,
      org.apache.ratis.thirdparty.io.grpc.ConnectivityState seen,
      java.util.function.Consumer<Boolean> onSettled) {
    switch (seen) {
      case READY -> onSettled.accept(true);
      case TRANSIENT_FAILURE, SHUTDOWN -> onSettled.accept(false);
      case IDLE, CONNECTING ->
          channel.notifyWhenStateChanged(
              seen, () -> watchUntilSettled(channel, channel.getState(true), onSettled));
    }
  }

  /** The node to try next: the known leader, else the peers in turn. */
  String target() {
    String l = leader;
    return l != null ? l : peers.get(Math.floorMod(next.getAndIncrement(), peers.size())).address();
  }

  /**
   * The node to try next other than {@code avoid} (one that refused a connection): the known leader
   * unless it is {@code avoid}, else the other peers in turn; {@code avoid} itself only when it is
   * the only peer.
   */
  String targetOtherThan(String avoid) {
    String l = leader;
    if (l != null && !l.equals(avoid)) {
      return l;
    }
    for (int i = 0; i < peers.size(); i++) {
      String a = peers.get(Math.floorMod(next.getAndIncrement(), peers.size())).address();
      if (!a.equals(avoid)) {
        return a;
      }
    }
    return avoid;
  }

  /** A NOT_LEADER (or UNAVAILABLE) answer from {@code from} named {@code leaderAddress}. */
  void redirected(String from, String leaderAddress) {
    if (!leaderAddress.isEmpty()) {
      if (!leaderAddress.equals(leader)) {
        metrics.redirected();
      }
      leader = leaderAddress;
    } else if (from.equals(leader)) {
      leader = null;
    }
  }

  /** {@code address} did not answer: stop assuming it leads. */
  void failed(String address) {
    if (address.equals(leader)) {
      leader = null;
    }
  }

  /**
   * {@code address} could not be reached ({@code error}): the client's own pacing decides when to
   * try it again, not gRPC's reconnect back-off (which grows to two minutes while the node is down,
   * and fails every call at once meanwhile), so a restarted node is reached on the next attempt.
   */
  void reconnectPromptly(String address, Throwable error) {
    ManagedChannel channel = channels.get(address);
    if (channel != null && Status.fromThrowable(error).getCode() == Status.Code.UNAVAILABLE) {
      channel.resetConnectBackoff();
    }
  }

  /** A leader-only call was answered by {@code address}. */
  void answered(String address) {
    leader = address;
  }

  String leaderAddress() {
    return leader;
  }

  /**
   * Records a failed attempt that did not reach fencekeeper. A node with TLS closes a plaintext
   * connection before a word of HTTP/2, which gRPC reports as nothing more than this: on a client
   * without TLS it counts as a refusal, so the call fails within the unreachable bound and says
   * what is missing instead of waiting out its timeout.
   */
  void attemptFailed(Throwable error) {
    Status status = Status.fromThrowable(error);
    if (ssl == null
        && status.getCode() == Status.Code.UNAVAILABLE
        && PLAINTEXT_CLOSED.equals(status.getDescription())) {
      reachability.refused(PLAINTEXT_REFUSED);
    } else {
      reachability.attemptFailed(error);
    }
  }

  private static final String PLAINTEXT_CLOSED = "Network closed for unknown reason";
  static final String PLAINTEXT_REFUSED =
      "the node closed the connection before answering, as a node with TLS does with a client"
          + " without it: this client has no certificate (set tls.cert, tls.key and tls.trust)";

  long requestTimeoutMs() {
    return requestTimeoutMs;
  }

  String peerList() {
    StringBuilder s = new StringBuilder();
    for (PeerAddress p : peers) {
      if (s.length() > 0) {
        s.append(',');
      }
      s.append(p.address());
    }
    return s.toString();
  }

  /** The client address of member {@code peerId}, or null when the cluster has no such member. */
  String addressOf(String peerId) {
    for (PeerAddress p : peers) {
      if (p.id().equals(peerId)) {
        return p.address();
      }
    }
    return null;
  }

  /** A random member's client address. */
  String anyNode() {
    return peers.get(ThreadLocalRandom.current().nextInt(peers.size())).address();
  }

  // -----------------------------------------------------------------------------------------------
  // Unary calls.

  /**
   * Sends {@code call} to {@code pinned} alone, or (null) to the leader when it is leader-only,
   * else to any node, until a node answers it or {@code callTimeoutMs} is up. Every answer that
   * reached fencekeeper is returned as it is, rejections included; NOT_LEADER and UNAVAILABLE
   * answers (a leader deposed while the call was pending) are followed to the leader they name, and
   * a command's OVERLOADED is retried a few times with back-off: it is re-sent unchanged, so its
   * request id applies it at most once. Each attempt may take up to the request timeout.
   */
  <T extends Message> CompletableFuture<Answer> call(
      Rpc.Call<T> call, long callTimeoutMs, String pinned) {
    T message = call.message();
    return start(
        new Unary<>(call.rpc().method, () -> message),
        callTimeoutMs,
        requestTimeoutMs,
        pinned,
        pinned == null && call.leaderOnly(),
        call.rpc().command,
        true);
  }

  /**
   * A command whose message is made again for each attempt by {@code message} (an acquire that
   * waits sends what is left of its wait), each attempt taking up to {@code attemptTimeoutMs}.
   * Completing the returned future (the caller giving up) cancels the attempt in flight.
   */
  <T extends Message> CompletableFuture<Answer> command(
      Rpc<T> rpc, Supplier<T> message, long callTimeoutMs, long attemptTimeoutMs) {
    return start(
        new Unary<>(rpc.method, message), callTimeoutMs, attemptTimeoutMs, null, true, true, true);
  }

  /**
   * Sends {@code message} by {@code method}, as {@link #call(Rpc.Call, long, String)} sends a
   * query: to {@code pinned} alone, or (null) to the leader when {@code leaderOnly}, else to any
   * node, following NOT_LEADER answers; each attempt may take up to {@code attemptTimeoutMs} (an
   * admin call waits for Raft: a new member's catch-up, an election). For the admin calls.
   */
  <T extends Message> CompletableFuture<Answer> call(
      MethodDescriptor<T, Response> method,
      T message,
      long callTimeoutMs,
      long attemptTimeoutMs,
      String pinned,
      boolean leaderOnly) {
    // An admin call's UNAVAILABLE is Raft's own answer (a refused transfer, a change that failed),
    // not a command a deposed leader left pending: it is the caller's, not retried.
    return start(
        new Unary<>(method, () -> message),
        callTimeoutMs,
        attemptTimeoutMs,
        pinned,
        leaderOnly,
        false,
        false);
  }

  private CompletableFuture<Answer> start(
      Unary<?> unary,
      long callTimeoutMs,
      long attemptTimeoutMs,
      String pinned,
      boolean leaderOnly,
      boolean retryOverloaded,
      boolean followUnavailable) {
    Attempts attempts =
        new Attempts(unary, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(callTimeoutMs));
    attempts.attemptTimeoutMs = attemptTimeoutMs;
    attempts.pinned = pinned;
    attempts.leaderOnly = leaderOnly;
    attempts.retryOverloaded = retryOverloaded;
    attempts.followUnavailable = followUnavailable;
    attempts.callTimeoutMs = callTimeoutMs;
    attempts.result.whenComplete(
        (answer, error) -> {
          ClientCall<?, ?> inFlight = attempts.inFlight;
          if (error != null && inFlight != null) {
            // The caller gave up (cancelled, timed out): so does the node, at once.
            inFlight.cancel("the caller gave up", null);
          }
        });
    attempts.next();
    return attempts.result;
  }

  private record Unary<T extends Message>(
      MethodDescriptor<T, Response> method, Supplier<T> message) {}

  /** One call's attempts, each at the node the cluster's answers so far point to. */
  private final class Attempts {
    final Unary<?> unary;
    final long deadlineNanos;
    final CompletableFuture<Answer> result = new CompletableFuture<>();
    long attemptTimeoutMs;
    String pinned;
    boolean leaderOnly;
    boolean retryOverloaded;
    boolean followUnavailable;
    long callTimeoutMs;
    int attempt;
    int overloaded;
    int tlsRefusals;
    String lastProblem = "no node tried";
    // When the first refused connection of a pinned call came (0: none yet).
    long firstRefusalNanos;
    // Whether an attempt so far may have reached a node with the request (its answer lost, or a
    // leader that lost its leadership while the command was pending): then no failure later can
    // say the command was not applied.
    boolean mayHaveReached;
    // The attempt on the wire, cancelled when the caller gives up.
    volatile ClientCall<?, ?> inFlight;

    Attempts(Unary<?> unary, long deadlineNanos) {
      this.unary = unary;
      this.deadlineNanos = deadlineNanos;
    }

    void next() {
      if (result.isDone()) {
        return;
      }
      if (closed) {
        result.completeExceptionally(new CallFailed("the client is closed"));
        return;
      }
      String address = pinned != null ? pinned : target();
      long leftMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
      long attemptMs = Math.max(1, Math.min(attemptTimeoutMs, leftMs));
      CompletableFuture<Response> sent;
      try {
        sent = once(address, unary, attemptMs, this);
      } catch (RuntimeException e) {
        sent = CompletableFuture.failedFuture(e);
      }
      sent.whenComplete((response, error) -> settled(address, response, error));
    }

    /** Records a refused connection; true once refusals have lasted the pinned call's bound. */
    private boolean refusedTooLong() {
      long now = System.nanoTime();
      if (firstRefusalNanos == 0) {
        firstRefusalNanos = now;
      }
      return now - firstRefusalNanos >= TimeUnit.MILLISECONDS.toNanos(PINNED_REFUSAL_BOUND_MS);
    }

    private void settled(String address, Response response, Throwable error) {
      boolean redirectedElsewhere = false;
      if (error == null) {
        reachability.contact();
        ResultCode code = response.getCode();
        if (code == ResultCode.UNAVAILABLE) {
          mayHaveReached = true;
        }
        if (code == ResultCode.NOT_LEADER
            || (code == ResultCode.UNAVAILABLE && followUnavailable)) {
          // NOT_LEADER: refused before the log, nothing changed. UNAVAILABLE: the node lost its
          // leadership while the command was pending; the same request id applies it at most once.
          redirected(address, response.getLeaderAddress());
          String l = leader;
          redirectedElsewhere = pinned == null && l != null && !l.equals(address);
          lastProblem = address + ": " + code + " (" + response.getMessage() + ")";
          if (pinned != null && code == ResultCode.NOT_LEADER) {
            result.complete(new Answer(response, address)); // asked of this node alone
            return;
          }
        } else if (code == ResultCode.OVERLOADED
            && retryOverloaded
            && ++overloaded < OVERLOADED_ATTEMPTS) {
          lastProblem = address + ": OVERLOADED (" + response.getMessage() + ")";
        } else {
          if (leaderOnly) {
            answered(address);
          }
          result.complete(new Answer(response, address));
          return;
        }
      } else {
        Status status = Status.fromThrowable(error);
        String tls = TlsFailures.describe(error);
        if (tls != null) {
          String why = "TLS handshake with " + address + " failed: " + tls;
          if (!followUnavailable && pinned == null && ++tlsRefusals < peers.size()) {
            // An admin call to whichever node answers tries the others before it gives up: one
            // node's certificate trouble is not the cluster's answer.
            failed(address);
            lastProblem = address + ": TLS handshake failed: " + tls;
          } else {
            // A refused handshake is final: no certificate changes between attempts, so a retry
            // would only be refused again.
            if (mayHaveReached) {
              result.completeExceptionally(new CallFailed(why));
            } else {
              result.complete(new Answer(TlsFailures.refusal(why), address));
            }
            return;
          }
        } else {
          if (!retryable(status.getCode())) {
            result.completeExceptionally(
                new CallFailed(
                    address
                        + " refused the call: "
                        + status.getCode()
                        + (status.getDescription() == null ? "" : " " + status.getDescription())));
            return;
          }
          attemptFailed(error);
          String refusal = Reachability.connectFailure(error);
          if (refusal == null) {
            mayHaveReached = true; // a connection was made, or may have been: the request with it
          } else if (pinned != null && refusedTooLong()) {
            // Asked of this node alone, which has refused every connection for the bound: it is
            // down, or its address is wrong. Waiting out the call's whole timeout would only delay
            // the caller's next step (another node, or the operator's fix).
            result.completeExceptionally(
                new CallFailed(
                    address
                        + " refused every connection for "
                        + PINNED_REFUSAL_BOUND_MS
                        + " ms ("
                        + refusal
                        + ")"));
            return;
          }
          failed(address);
          reconnectPromptly(address, error);
          lastProblem =
              address
                  + ": "
                  + status.getCode()
                  + (status.getDescription() == null ? "" : " (" + status.getDescription() + ")");
        }
      }
      metrics.retried();
      attempt++;
      // Short pauses otherwise: a refused connection or a node that knows no leader yet costs
      // nothing to ask again, and an election is over sooner than a longer back-off would notice.
      long pauseMs =
          redirectedElsewhere
              ? 0
              : overloaded > 0 && error == null
                  ? Math.min(50L << Math.min(overloaded - 1, 4), 800)
                  : Math.min(50L << Math.min(attempt - 1, 1), 100);
      if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pauseMs) >= deadlineNanos) {
        result.completeExceptionally(
            new TimeoutException(
                "no node answered within "
                    + callTimeoutMs
                    + " ms (last: "
                    + lastProblem
                    + ") at "
                    + peerList()));
        return;
      }
      if (pauseMs == 0) {
        executor.execute(this::next);
      } else {
        timer.schedule(() -> executor.execute(this::next), pauseMs, TimeUnit.MILLISECONDS);
      }
    }
  }

  private static boolean retryable(Status.Code code) {
    return switch (code) {
      case UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, UNKNOWN, INTERNAL, ABORTED -> true;
      default -> false;
    };
  }

  private <T extends Message> CompletableFuture<Response> once(
      String address, Unary<T> unary, long timeoutMs, Attempts attempts) {
    CompletableFuture<Response> answer = new CompletableFuture<>();
    T message = unary.message().get();
    ClientCall<T, Response> call =
        channel(address)
            .newCall(
                unary.method(),
                CallOptions.DEFAULT.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS));
    attempts.inFlight = call;
    if (attempts.result.isDone()) {
      call.cancel("the caller gave up", null);
    }
    ClientCalls.asyncUnaryCall(
        call,
        message,
        new StreamObserver<Response>() {
          @Override
          public void onNext(Response value) {
            answer.complete(value);
          }

          @Override
          public void onError(Throwable t) {
            answer.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {
            if (!answer.isDone()) {
              answer.completeExceptionally(
                  new StatusRuntimeException(
                      Status.INTERNAL.withDescription("the call ended without an answer")));
            }
          }
        });
    return answer;
  }

  // -----------------------------------------------------------------------------------------------
  // Watch streams and the session stream.

  /**
   * Opens a Watch stream at {@code address}; its messages go to {@code responses}. Cancel the
   * returned call to end it.
   */
  ClientCall<WatchRequest, Response> openWatch(
      String address, WatchRequest request, StreamObserver<Response> responses) {
    ClientCall<WatchRequest, Response> call =
        channel(address).newCall(FencekeeperGrpc.getWatchMethod(), CallOptions.DEFAULT);
    ClientCalls.asyncServerStreamingCall(call, request, responses);
    return call;
  }

  /** The node a watch should read from: the leader when known, else any node. */
  String watchTarget() {
    String l = leader;
    return l != null ? l : anyNode();
  }

  /**
   * {@code message} without the events at or before the position asked from; null when none is
   * left. A stream re-opened at another node delivers each event once, however the nodes' replays
   * and live events meet.
   */
  static Response onlyAfter(Response message, long afterIndex, int afterSeq) {
    if (message.getEventsCount() == 0) {
      return message;
    }
    List<dev.fencekeeper.proto.LeaseEvent> kept = new java.util.ArrayList<>();
    long index = afterIndex;
    int seq = afterSeq;
    for (dev.fencekeeper.proto.LeaseEvent e : message.getEventsList()) {
      if (e.getIndex() > index || (e.getIndex() == index && e.getSeq() > seq)) {
        kept.add(e);
        index = e.getIndex();
        seq = e.getSeq();
      }
    }
    if (kept.size() == message.getEventsCount()) {
      return message;
    }
    return kept.isEmpty() ? null : message.toBuilder().clearEvents().addAllEvents(kept).build();
  }

  /** The applied index of the node at {@code address}: where a watch from now starts. */
  CompletableFuture<Long> appliedIndexAt(String address) {
    return call(
            new Rpc.Call<>(Rpc.NODE_INFO, NodeInfoQuery.getDefaultInstance()),
            requestTimeoutMs,
            address)
        .thenApply(
            a -> {
              if (!a.response().hasNode()) {
                // Refused (a TLS handshake, an identity): no position to start from.
                throw new java.util.concurrent.CompletionException(
                    new CallFailed(a.response().getCode() + ": " + a.response().getMessage()));
              }
              return a.response().getNode().getLastAppliedIndex();
            });
  }

  /** Opens a session stream to {@code address}; answers go to {@code responses}. */
  StreamObserver<SessionRequest> openSession(
      String address, StreamObserver<SessionResponse> responses) {
    return FencekeeperGrpc.newStub(channel(address)).session(responses);
  }

  /**
   * Closes every channel at once. The client calls this after its releases and cancels were
   * answered (or their time ran out), so what is still open is only what nobody waits for any more:
   * a watch's stream, an acquire's wait, the session stream. A graceful shutdown would wait for
   * those to end by themselves, which a watch never does.
   */
  @Override
  public void close() {
    closed = true;
    for (ManagedChannel channel : channels.values()) {
      channel.shutdownNow();
    }
    for (ManagedChannel channel : channels.values()) {
      try {
        channel.awaitTermination(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    LOG.debug("Closed the channels to {}", channels.keySet());
  }
}
