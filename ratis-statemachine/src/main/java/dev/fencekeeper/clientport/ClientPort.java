package dev.fencekeeper.clientport;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.metrics.StateMachineMetrics;
import dev.fencekeeper.metrics.TlsListener;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.statemachine.FencingStateMachine;
import dev.fencekeeper.statemachine.proto.InternalRequest;
import dev.fencekeeper.statemachine.proto.Tick;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.thirdparty.io.grpc.Server;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptors;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's client port: fencekeeper's own gRPC server ({@code client.port}, {@code client.bind})
 * serving the client protocol ({@link FencekeeperService}) beside the Raft port, with the same
 * mutual TLS. Built on gRPC's Netty server directly rather than on Ratis's, so that its executors,
 * flow control, message size, keep-alive and stream limits are fencekeeper's to set.
 *
 * <p>Calls run on the transport's threads (direct executor): no handler blocks, and a request
 * reaches the Raft server without a thread hand-off. Answers of entries with several commands,
 * stream drains and timers run on two small pools of the port's own.
 */
public final class ClientPort implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClientPort.class);

  /** Log entries of client commands the leader keeps in flight; the rest wait and are batched. */
  static final int ENTRIES_IN_FLIGHT = 2;

  /** Calls one connection may have open at once (HTTP/2 streams); a client's streams included. */
  static final int MAX_CALLS_PER_CONNECTION = 10_000;

  private final Server server;
  private final FencekeeperService service;
  private final Streams streams;
  private final WaitingAcquires waiting;
  private final Redirects redirects;
  private final ExecutorService workers;
  private final ScheduledExecutorService timer;
  private final String address;

  private ClientPort(
      Server server,
      FencekeeperService service,
      Streams streams,
      WaitingAcquires waiting,
      Redirects redirects,
      ExecutorService workers,
      ScheduledExecutorService timer,
      String address) {
    this.server = server;
    this.service = service;
    this.streams = streams;
    this.waiting = waiting;
    this.redirects = redirects;
    this.workers = workers;
    this.timer = timer;
    this.address = address;
  }

  /**
   * Starts the client port of the node {@code config} describes, in front of its running Raft
   * server, reached through {@code raft}. {@code reads} is the node's read bound. {@code tls}
   * serves the port's mutual TLS with the same key and trust managers as the Raft port, so that a
   * certificate reload reaches both; null when {@code config} has no TLS.
   */
  public static ClientPort start(
      ClusterConfig config,
      LocalRaft raft,
      FencingStateMachine stateMachine,
      StateMachineMetrics metrics,
      ReadSlots reads,
      GrpcTlsConfig tls)
      throws IOException {
    String nodeId = config.self().id();
    ExecutorService workers =
        Executors.newFixedThreadPool(2, daemon("fencekeeper-client-" + nodeId));
    ScheduledExecutorService timer =
        Executors.newSingleThreadScheduledExecutor(daemon("fencekeeper-client-timer-" + nodeId));
    try {
      stateMachine.setClientPortId(raft.clientId());
      Redirects redirects =
          new Redirects(raft, stateMachine::leaderAnnouncement, config.clientAddresses());
      ByteString tick =
          UnsafeByteOperations.unsafeWrap(
              InternalRequest.newBuilder()
                  .setTick(Tick.getDefaultInstance())
                  .build()
                  .toByteArray());
      ReadBarrier barrier = new ReadBarrier(() -> raft.propose(tick));
      CommandQueue commands =
          new CommandQueue(
              raft,
              redirects,
              stateMachine.pendingSlots(),
              config.limits(),
              workers,
              ENTRIES_IN_FLIGHT);
      EventHub hub = new EventHub();
      Streams streams =
          new Streams(
              stateMachine.events(), hub, config.limits(), config.streamLimits(), workers, timer);
      FencekeeperService[] service = new FencekeeperService[1];
      WaitingAcquires waiting =
          new WaitingAcquires(r -> service[0].submit(r), hub, timer, config.limits());
      service[0] =
          new FencekeeperService(
              stateMachine,
              raft,
              barrier,
              redirects,
              commands,
              config.security(),
              config.limits(),
              metrics,
              reads,
              waiting,
              streams,
              new AdminCalls(
                  raft,
                  redirects,
                  config.security(),
                  metrics,
                  config.healthMaxFollowerLag(),
                  config.clientAddress().address()));
      streams.setNode(
          new SessionCall.Node() {
            @Override
            public boolean leaderReady() {
              return raft.leadership().leaderReady();
            }

            @Override
            public boolean followsAnother() {
              LocalRaft.Leadership now = raft.leadership();
              return !now.leader() && !now.leaderId().isEmpty();
            }

            @Override
            public boolean elected() {
              LocalRaft.Leadership now = raft.leadership();
              return now.leader() && !now.leaderReady();
            }

            @Override
            public Response notLeader() {
              return redirects.notLeader();
            }

            @Override
            public CompletableFuture<CommandQueue.Answer> submit(Request stamped) {
              return service[0].submit(stamped);
            }
          });
      stateMachine.events().setListener(hub);
      Server server =
          builder(config, tls, metrics)
              .addService(
                  ServerInterceptors.intercept(
                      UndecodableRequests.refuse(service[0].bindService()),
                      CallerIdentity.interceptor()))
              .build()
              .start();
      String address = config.clientAddress().address();
      LOG.info(
          "fencekeeper node {} serving clients on {} (bound to {}:{})",
          nodeId,
          address,
          config.clientBindHost(),
          server.getPort());
      return new ClientPort(
          server, service[0], streams, waiting, redirects, workers, timer, address);
    } catch (IOException | RuntimeException e) {
      workers.shutdownNow();
      timer.shutdownNow();
      throw e;
    }
  }

  private static NettyServerBuilder builder(
      ClusterConfig config, GrpcTlsConfig tls, StateMachineMetrics metrics) throws IOException {
    NettyServerBuilder b =
        NettyServerBuilder.forAddress(
                new InetSocketAddress(config.clientBindHost(), config.clientPort()))
            .directExecutor()
            .maxInboundMessageSize(config.limits().maxRequestMessageBytes())
            .maxConcurrentCallsPerConnection(MAX_CALLS_PER_CONNECTION)
            // Dead connections (a client that vanished without closing) are found and their
            // streams ended; clients may ping every 10 s to keep idle connections through NATs.
            .keepAliveTime(30, TimeUnit.SECONDS)
            .keepAliveTimeout(10, TimeUnit.SECONDS)
            .permitKeepAliveTime(10, TimeUnit.SECONDS)
            .permitKeepAliveWithoutCalls(true)
            .addTransportFilter(new CallerIdentity());
    if (config.security().tlsEnabled() != (tls != null)) {
      throw new IllegalArgumentException(
          "the client port's TLS managers must be given exactly when the configuration has TLS");
    }
    if (tls != null) {
      // A refused handshake is logged and counted by the node (the client is told by its TLS).
      b.protocolNegotiator(
          HandshakeWatch.mutualTls(
              tls,
              (remote, cause) -> metrics.tlsHandshakeRefused(TlsListener.CLIENT, remote, cause)));
    }
    return b;
  }

  /** This node's client address as clients reach it (host:port). */
  public String address() {
    return address;
  }

  /** The port the server listens on (the configured one). */
  public int port() {
    return server.getPort();
  }

  /**
   * The service object, for an in-process caller (a gateway) that sets {@link
   * CallerIdentity#CONTEXT} around each call.
   */
  public FencekeeperService service() {
    return service;
  }

  /**
   * This node stopped leading: waiting acquires are answered UNAVAILABLE and sessions end with
   * NOT_LEADER, both naming the new leader, so their clients go there.
   */
  public void leadershipLost() {
    streams.leadershipLost();
    waiting.leadershipLost(why -> redirects.redirect(ResultCode.UNAVAILABLE, why).build());
  }

  /** Stops listening and ends every call still open (streams do not end by themselves). */
  @Override
  public void close() {
    server.shutdownNow();
    try {
      server.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      workers.shutdownNow();
      timer.shutdownNow();
    }
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
