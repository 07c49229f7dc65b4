package dev.fencekeeper.server;

import dev.fencekeeper.clientport.CallerIdentity;
import dev.fencekeeper.clientport.ClientPort;
import dev.fencekeeper.clientport.HandshakeWatch;
import dev.fencekeeper.clientport.LocalRaft;
import dev.fencekeeper.clientport.RaftPortGuide;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.CommonPool;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.PrivateFiles;
import dev.fencekeeper.gateway.GatewaySettings;
import dev.fencekeeper.gateway.HttpGateway;
import dev.fencekeeper.metrics.NodeMetrics;
import dev.fencekeeper.metrics.TlsListener;
import dev.fencekeeper.replication.RecoveringGrpc;
import dev.fencekeeper.statemachine.FencingStateMachine;
import dev.fencekeeper.statemachine.LeaderDuties;
import dev.fencekeeper.statemachine.RaftEvents;
import dev.fencekeeper.statemachine.proto.InternalRequest;
import dev.fencekeeper.statemachine.proto.Takeover;
import dev.fencekeeper.statemachine.proto.Tick;
import java.io.IOException;
import java.nio.file.Files;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLException;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.io.grpc.Context;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One fencekeeper node: a Ratis server hosting the {@link FencingStateMachine}, plus the leader's
 * duties that live outside the log but only ever act through it — committing the takeover grace
 * when it becomes leader, and committing a tick when a lease falls due so expiry does not wait for
 * traffic.
 */
public final class FencekeeperServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FencekeeperServer.class);

  /** A Raft server close this long waited out at least one of Ratis's 3 s channel closes. */
  private static final long SLOW_RAFT_CLOSE_MS = 2_500;

  /**
   * TEST ONLY: {@code -Dfencekeeper.testing.clock-step-file=<file>} makes this node's wall clock
   * follow a step (in ms) written into that file while it runs — how the clock-skew drill steps a
   * leader's clock.
   */
  public static final String CLOCK_STEP_FILE_PROPERTY = WallClock.STEP_FILE_PROPERTY;

  /**
   * TEST ONLY: {@code -Dfencekeeper.testing.storage-reserve-bytes=N} lowers the free-space reserve
   * for a small tmpfs.
   */
  public static final String STORAGE_RESERVE_PROPERTY = StorageGuard.RESERVE_PROPERTY;

  private final ClusterConfig config;
  private final FencingStateMachine stateMachine;
  private final NodeMetrics metrics;
  private final ReadsInFlight reads;
  private final LeaderLossWatch leaderLossWatch;
  private final FollowerWatch followerWatch;
  private final RaftServer server;
  private final LocalRaft raft;
  private final ScheduledExecutorService leaderTimer;
  private final StorageGuard storageGuard;
  private final ReloadableTls tls;
  private final ClusterIdentity identity;
  private final ClusterIdKeeper clusterIdKeeper;
  private final CompletableFuture<StorageFullException> storageExhausted =
      new CompletableFuture<>();
  private final ExpiryTicker expiryTicker;
  private volatile ClientPort clientPort;
  private volatile HttpGateway gateway;

  /**
   * Makes a node's state machine from its limits, its wall clock and its monotonic clock: {@code
   * FencingStateMachine::new} for every node this project runs.
   */
  @FunctionalInterface
  public interface StateMachineFactory {
    FencingStateMachine create(Limits limits, LongSupplier wallClock, LongSupplier monotonicNanos);
  }

  private FencekeeperServer(
      ClusterConfig config,
      boolean withGroup,
      StateMachineFactory stateMachines,
      ClusterIdentity identity)
      throws IOException {
    this.config = config;
    this.identity = identity;
    LongSupplier wallClock = WallClock.forNode(config.clockOffsetMs());
    this.stateMachine = stateMachines.create(config.limits(), wallClock, System::nanoTime);
    CommonPool.threadPerStageWarning().ifPresent(w -> LOG.warn("Slower than it could be: {}", w));
    RaftPeerId self = RaftPeerId.valueOf(config.self().id());
    // Every protected value is in there: only this node's user may read it.
    if (PrivateFiles.directory(config.storageDir())) {
      LOG.warn(
          "{}: storage.dir {} was readable by others; it is now private to this user (rwx------)",
          self,
          config.storageDir());
    }
    // Before anything is written: a node does not start on storage below its reserve.
    this.storageGuard = StorageGuard.start(config.storageDir(), self.toString());
    // Before any Ratis object of this node exists: it hooks Ratis's metric registries as they are
    // created.
    this.metrics = NodeMetrics.create(self.toString());
    metrics.watchStorage(storageGuard::problem, storageGuard::freeBytes);
    stateMachine.setMetrics(metrics);
    stateMachine.setSecurity(config.security());
    stateMachine.setOverload(config.overload());
    this.tls = config.security().tlsEnabled() ? ReloadableTls.load(config.security().tls()) : null;
    if (tls != null) {
      metrics.watchCertificate(TlsListener.RAFT, tls::notAfter);
    }
    Parameters parameters = ratisParameters(config, tls);
    this.reads = new ReadsInFlight(config.overload().maxPendingReads());
    this.leaderLossWatch =
        new LeaderLossWatch(self, RaftConfig.groupId(config), metrics::electionStartedOnLeaderLoss);
    CallerGate gate = new CallerGate(config.security(), metrics);
    // Before the server starts: its first takeover entry announces the client address.
    String clientAddress = config.clientAddress().address();
    stateMachine.setClientAddress(clientAddress);
    RaftPortGuide guide = new RaftPortGuide(self.toString(), clientAddress);
    GrpcConfigKeys.Server.setServicesCustomizer(
        parameters,
        (builder, types) -> {
          if (tls != null) {
            // Ratis's own TLS negotiation drops a refused handshake without a word: this one, from
            // the same managers, tells the node (docs/ratis-workarounds.md).
            builder.protocolNegotiator(raftPortTls(tls, metrics));
          }
          // Interceptors run last-added first: Ratis's client and admin services are refused
          // before anything else looks at the call; the peers' protocol passes to the gate.
          return builder
              .intercept(gate)
              .intercept(leaderLossWatch)
              .intercept(guide)
              .addService(PeerIntroductions.service(self.toString(), identity))
              .fallbackHandlerRegistry(guide);
        });
    stateMachine.setClusterId(() -> identity.clusterId().orElse(""));
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "fencekeeper-leader-duties-" + self);
              t.setDaemon(true);
              return t;
            });
    // The expiry ticker cancels a long sleep whenever a deadline moves earlier: drop it at once.
    timer.setRemoveOnCancelPolicy(true);
    this.leaderTimer = timer;
    this.expiryTicker =
        new ExpiryTicker(
            leaderTimer,
            stateMachine::leaderTimeMs,
            stateMachine::nextExpiryMs,
            () -> propose(InternalRequest.newBuilder().setTick(Tick.getDefaultInstance()).build()));
    stateMachine.setLeaderDuties(new Duties());
    RaftProperties serverProperties = RaftConfig.serverProperties(config);
    long stuckFollowerRestartMs = config.stuckFollowerRestartAfter().toMillis();
    if (stuckFollowerRestartMs > 0) {
      // A leader whose bookkeeping for a follower went stale restarts that follower's appender
      // instead of sending it heartbeats forever (docs/ratis-workarounds.md).
      RecoveringGrpc.install(serverProperties, stuckFollowerRestartMs);
    }
    RaftServer.Builder builder =
        RaftServer.newBuilder()
            .setServerId(self)
            .setProperties(serverProperties)
            .setParameters(parameters)
            .setStateMachine(stateMachine)
            .setOption(RaftStorage.StartupOption.RECOVER);
    // Without a group, Ratis still recovers every group already in the storage dir; a joining node
    // has none and waits for the cluster to add it (FencingAdmin.addMember).
    this.server = (withGroup ? builder.setGroup(RaftConfig.group(config)) : builder).build();
    // The one way into Raft on this node, for the client port and the leader's duties alike.
    this.raft = new LocalRaft(server, RaftConfig.groupId(config), self);
    stateMachine.setInternalClientId(raft.internalId());
    metrics.bind(
        server, RaftConfig.groupId(config), stateMachine::read, config.healthMaxApplyLag());
    metrics.watchClockOffset(stateMachine::wallAheadOfTimeLineMs);
    leaderLossWatch.watch(server);
    this.followerWatch =
        new FollowerWatch(
            self.toString(),
            server,
            RaftConfig.groupId(config),
            config.healthMaxFollowerLag(),
            metrics::followersSampled);
    this.clusterIdKeeper =
        new ClusterIdKeeper(config, tls == null ? null : tls.grpcTlsConfig(), identity, server);
    // Both sleep while there is nothing to watch; these events give them something.
    stateMachine.setRaftEvents(
        new RaftEvents() {
          @Override
          public void leaderChanged() {
            followerWatch.leaderChanged();
          }

          @Override
          public void configurationChanged() {
            clusterIdKeeper.configurationChanged();
          }
        });
    storageGuard.exhausted().thenAccept(this::stopForStorage);
  }

  /**
   * Before anything of the node runs: asks the peers which cluster they form and refuses to start a
   * node whose storage does not fit it ({@link StartCheck}); a node that never starts its Raft
   * server cannot vote. Returns the node's cluster identity, with the cluster's id stored when the
   * node learnt it here.
   */
  private static ClusterIdentity checkCluster(ClusterConfig config, boolean join)
      throws IOException {
    ClusterIdentity identity = ClusterIdentity.open(config.storageDir());
    GrpcTlsConfig peerTls =
        config.security().tlsEnabled()
            ? ReloadableTls.load(config.security().tls()).grpcTlsConfig()
            : null;
    boolean hasRaftData =
        Files.isDirectory(
            config
                .storageDir()
                .resolve(RaftConfig.groupId(config).getUuid().toString())
                .resolve("current"));
    List<StartCheck.Answer> answers =
        PeerIntroductions.introduce(
            config, peerTls, identity.clusterId().orElse(""), ClusterIdKeeper.ASK_TIMEOUT);
    LOG.info(
        "{} (cluster {}) asked its peers which cluster they form: {} of {} answered {}",
        config.self().id(),
        identity.clusterId().orElse("not known yet"),
        answers.size(),
        config.peers().size() - 1,
        answers.stream()
            .map(a -> a.peerId() + "=" + (a.clusterId().isEmpty() ? "none" : a.clusterId()))
            .toList());
    StartCheck.Verdict verdict =
        StartCheck.decide(
            new StartCheck.Local(
                config.self().id(),
                config.storageDir().toString(),
                identity.clusterId(),
                hasRaftData,
                join),
            answers);
    if (verdict instanceof StartCheck.Refuse refuse) {
      throw new ClusterRefusedException(refuse.reason());
    }
    Optional<String> adopt = ((StartCheck.Start) verdict).adopt();
    if (adopt.isPresent() && identity.adopt(adopt.get())) {
      LOG.info("{} joins cluster {}, as its peers report", config.self().id(), adopt.get());
    }
    return identity;
  }

  /**
   * The configuration's Ratis parameters, with TLS served from {@code tls} (null: plaintext), so
   * that {@link #reloadCertificates} reaches every channel of this node.
   */
  private static Parameters ratisParameters(ClusterConfig config, ReloadableTls tls) {
    Parameters parameters = RaftConfig.parameters(config);
    if (tls != null) {
      GrpcConfigKeys.TLS.setConf(parameters, tls.grpcTlsConfig());
    }
    return parameters;
  }

  /**
   * The Raft port's mutual TLS as Ratis sets it up from {@link ReloadableTls#grpcTlsConfig()}
   * (client certificate required, the same key and trust managers), with each refused handshake
   * counted and logged under {@link TlsListener#RAFT}.
   */
  private static HandshakeWatch raftPortTls(ReloadableTls tls, NodeMetrics metrics) {
    try {
      return HandshakeWatch.mutualTls(
          tls.grpcTlsConfig(),
          (remote, cause) -> metrics.tlsHandshakeRefused(TlsListener.RAFT, remote, cause));
    } catch (SSLException e) {
      throw new IllegalStateException("the Raft port's TLS cannot be set up: " + e, e);
    }
  }

  /**
   * Reads {@code tls.cert}, {@code tls.key} and {@code tls.trust} again and presents the new
   * certificate, and trusts the new CAs, from the next connection on (as etcd does on SIGHUP);
   * connections already open keep theirs. Files that cannot be read or do not fit together change
   * nothing.
   *
   * @return what this node presents now, in one line
   * @throws IOException naming the file that is wrong; the node goes on with what it had
   */
  public String reloadCertificates() throws IOException {
    if (tls == null) {
      return "no TLS configured: nothing to reload";
    }
    X509Certificate presented = tls.reload();
    return "presenting "
        + presented.getSubjectX500Principal().getName()
        + " (serial "
        + presented.getSerialNumber().toString(16)
        + ", valid until "
        + presented.getNotAfter().toInstant()
        + ") from "
        + config.security().tls().cert();
  }

  /**
   * The storage fell below its reserve: the Raft server stops now, while there is room left for
   * what stopping writes, so that nothing it needs to start again is torn. The metrics and {@code
   * /health} (not ready, saying why) stay up until the process exits; {@link #storageExhausted}
   * completes.
   */
  private void stopForStorage(String why) {
    Thread stopper =
        new Thread(
            () -> {
              expiryTicker.stop();
              // The client port and gateway go first: answering clients on a node whose Raft
              // server is gone would point them back at it instead of at the new leader.
              try {
                HttpGateway http = gateway;
                if (http != null) {
                  http.close();
                }
                ClientPort port = clientPort;
                if (port != null) {
                  port.close();
                }
                server.close();
              } catch (IOException | RuntimeException e) {
                LOG.warn("Stopping the Raft server after the storage ran low failed", e);
              }
              storageExhausted.complete(new StorageFullException(why));
            },
            "fencekeeper-storage-stop-" + config.self().id());
    stopper.setDaemon(true);
    stopper.start();
  }

  /**
   * Completes when this node stopped its Raft server because its storage directory's free space
   * fell below the reserve (one log line says so; {@code /health} is not ready, and the gauge
   * {@code fencekeeper_storage_writable} is 0): the node process should exit, and be started again
   * once space has been freed.
   */
  public CompletableFuture<StorageFullException> storageExhausted() {
    return storageExhausted;
  }

  /** Starts the node described by {@code config} (its {@code node.id} names which peer it is). */
  public static FencekeeperServer start(ClusterConfig config) throws IOException {
    return start(config, false, FencingStateMachine::new);
  }

  /**
   * Starts the node described by {@code config} without creating the group, so that a running
   * cluster can add it as a new member ({@code fencekeeper members add}, {@code
   * FencingAdmin.addMember}): the group is then created on it with the configuration the cluster
   * sends, and it catches up from the leader. On a storage dir that already holds the group (a
   * restart after it was added) the node simply recovers it. {@code config}'s {@code peers} should
   * list the cluster as it will be once this node is added.
   */
  public static FencekeeperServer join(ClusterConfig config) throws IOException {
    return start(config, true, FencingStateMachine::new);
  }

  /**
   * Starts a node as {@link #start(ClusterConfig)} does, or to join as {@link #join} does when
   * {@code join}, with the state machine {@code stateMachines} makes.
   */
  public static FencekeeperServer start(
      ClusterConfig config, boolean join, StateMachineFactory stateMachines) throws IOException {
    boolean withGroup = !join;
    ClusterIdentity identity = checkCluster(config, join);
    FencekeeperServer s = new FencekeeperServer(config, withGroup, stateMachines, identity);
    s.server.start();
    s.followerWatch.start();
    s.clusterIdKeeper.start();
    try {
      s.metrics.startExporters(config.metricsBindHost(), config.metricsPort());
      s.clientPort =
          ClientPort.start(
              config,
              s.raft,
              s.stateMachine,
              s.metrics,
              s.reads,
              s.tls == null ? null : s.tls.grpcTlsConfig());
      if (s.tls != null) {
        s.metrics.watchCertificate(TlsListener.CLIENT, s.tls::notAfter);
      }
      if (config.httpPort() != 0) {
        // The client protocol as JSON: the client port's own service, called in-process as the
        // identity the gateway's TLS established.
        s.gateway =
            HttpGateway.start(
                GatewaySettings.forNode(config),
                s.tls == null ? null : s.tls.grpcTlsConfig(),
                (remote, cause) -> s.metrics.tlsHandshakeRefused(TlsListener.HTTP, remote, cause),
                s.clientPort.service(),
                caller -> Context.current().withValue(CallerIdentity.CONTEXT, caller),
                config::httpAddressOf);
        if (s.tls != null) {
          s.metrics.watchCertificate(TlsListener.HTTP, s.tls::notAfter);
        }
      }
    } catch (IOException | RuntimeException e) {
      try {
        // e.g. metrics.port or client.port already in use: do not leave a half-started node behind
        s.close();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    if (withGroup) {
      LOG.info(
          "fencekeeper node {} serving on {} (group {}, cluster {}, data {})",
          config.self().id(),
          config.self().address(),
          RaftConfig.groupId(config),
          identity.clusterId().orElse("not known yet"),
          config.storageDir());
    } else {
      LOG.info(
          "fencekeeper node {} listening on {} to join group {} (data {}); add it with"
              + " `fencekeeper members add {}={}`",
          config.self().id(),
          config.self().address(),
          RaftConfig.groupId(config),
          config.storageDir(),
          config.self().id(),
          config.self().address());
    }
    return s;
  }

  public RaftServer raftServer() {
    return server;
  }

  public FencingStateMachine stateMachine() {
    return stateMachine;
  }

  /** This node's client port (the client protocol, fencekeeper.v1.Fencekeeper). */
  public ClientPort clientPort() {
    return clientPort;
  }

  /** This node's JSON gateway; empty when {@code http.port} is 0. */
  public java.util.Optional<HttpGateway> gateway() {
    return java.util.Optional.ofNullable(gateway);
  }

  /** This node's client address (host:port), as clients reach it. */
  public String clientAddress() {
    return config.clientAddress().address();
  }

  public ClusterConfig config() {
    return config;
  }

  /** The id of the cluster this node belongs to; empty while it knows none yet. */
  public Optional<String> clusterId() {
    return identity.clusterId();
  }

  /** This node's metrics: the registry, its JMX domain and HTTP port, and the readiness check. */
  public NodeMetrics metrics() {
    return metrics;
  }

  /**
   * The reads this node has received and not yet answered (at most {@code
   * overload.pending-reads.max}).
   */
  public int readsInFlight() {
    return reads.inUse();
  }

  @Override
  public void close() throws IOException {
    LOG.info("fencekeeper node {} stopping", config.self().id());
    HttpGateway http = gateway;
    if (http != null) {
      http.close();
    }
    ClientPort port = clientPort;
    if (port != null) {
      port.close();
    }
    storageGuard.close();
    expiryTicker.stop();
    leaderTimer.shutdownNow();
    leaderLossWatch.close();
    followerWatch.close();
    clusterIdKeeper.close();
    long closing = System.nanoTime();
    try {
      server.close();
    } finally {
      long closedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closing);
      if (closedMs >= SLOW_RAFT_CLOSE_MS) {
        LOG.info(
            "the Raft server of {} took {} ms to close: Ratis waits up to 3 s for each peer"
                + " connection that still has a call open (docs/ratis-workarounds.md)",
            config.self().id(),
            closedMs);
      }
      metrics.close(); // stops the HTTP endpoint and unregisters the JMX beans
      LOG.info("fencekeeper node {} stopped", config.self().id());
    }
  }

  /**
   * Proposes a leader duty through this node's own server; completes true once it is applied, false
   * if it was not. Not retried here: a duty proposed by a node that is no longer leader is simply
   * dropped; the new leader runs its own duties.
   */
  private CompletableFuture<Boolean> propose(InternalRequest request) {
    return raft.propose(
            org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations.unsafeWrap(
                request.toByteArray()))
        .handle(
            (reply, error) -> {
              if (error != null || !reply.isSuccess()) {
                LOG.debug(
                    "Leader duty {} not committed: {}",
                    request.getBodyCase(),
                    error != null ? error.toString() : reply.getException());
                return false;
              }
              return true;
            });
  }

  private final class Duties implements LeaderDuties {
    @Override
    public void onLeaderReady() {
      LOG.info("{} is leader: committing the takeover grace for live leases", config.self().id());
      propose(InternalRequest.newBuilder().setTakeover(Takeover.getDefaultInstance()).build());
      expiryTicker.start();
    }

    @Override
    public void deadlineMovedEarlier(long deadlineMs) {
      expiryTicker.deadlineMoved(deadlineMs);
    }

    @Override
    public void onNotLeader() {
      expiryTicker.stop();
      ClientPort port = clientPort;
      if (port != null) {
        port.leadershipLost();
      }
    }
  }
}
