package dev.fencekeeper.testing;

import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.RaftConfig;
import dev.fencekeeper.server.local.LocalCluster;
import dev.fencekeeper.statemachine.FencingStateMachine;
import dev.fencekeeper.statemachine.RestoreSeed;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.statemachine.TransactionContext;

/**
 * Three real Ratis nodes in this JVM ({@link LocalCluster}'s in-process flavour) on loopback ports
 * picked free, with data under a directory the test owns. Each node serves the client protocol on
 * its client port ({@link #clientAddress}). Always close it: it stops every node and client it
 * started.
 */
public final class TestCluster implements AutoCloseable {
  private final LocalCluster cluster;
  private final boolean withMetrics;
  private final List<FencingClient> clients = new ArrayList<>();

  private TestCluster(LocalCluster cluster, boolean withMetrics) {
    this.cluster = cluster;
    this.withMetrics = withMetrics;
  }

  /** Starts three nodes; {@code extra} overrides cluster properties (limits, timeouts). */
  public static TestCluster start(Path dataDir, Properties extra) {
    return start(dataDir, extra, false);
  }

  /**
   * As {@link #start(Path, Properties)}, and each node also serves {@code /metrics} and {@code
   * /health} on its own loopback port ({@link #metricsPort}), kept across restarts of that node.
   */
  public static TestCluster startWithMetrics(Path dataDir, Properties extra) {
    return start(dataDir, extra, true);
  }

  /**
   * Starts three new nodes, each seeded from {@code backup} as {@code fencekeeper restore} would.
   */
  public static TestCluster startRestored(Path dataDir, Path backup) {
    return start(dataDir, new Properties(), false, backup);
  }

  private static TestCluster start(Path dataDir, Properties extra, boolean withMetrics) {
    return start(dataDir, extra, withMetrics, null);
  }

  private static TestCluster start(
      Path dataDir, Properties extra, boolean withMetrics, Path backup) {
    LocalCluster cluster =
        LocalCluster.builder(dataDir)
            .property("cluster.name", "test-" + dataDir.getFileName())
            .properties(extra)
            .metricsPorts(withMetrics)
            .build();
    if (backup != null) {
      for (String id : cluster.nodeIds()) {
        try {
          RestoreSeed.seed(backup, dataDir.resolve(id), cluster.config().limits());
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    return new TestCluster(cluster.startAll(), withMetrics);
  }

  public static TestCluster start(Path dataDir) {
    return start(dataDir, new Properties());
  }

  public ClusterConfig config() {
    return cluster.config();
  }

  /**
   * The client address (host:port) of node {@code id}: its Raft port + {@value
   * ClusterConfig#CLIENT_PORT_OFFSET}, as {@link ClusterConfig#clientAddresses()} derives it.
   */
  public String clientAddress(String id) {
    return cluster.clientAddress(id);
  }

  /** Every node's client address, in node order (n1, n2, n3). */
  public List<String> clientAddresses() {
    return cluster.clientAddresses();
  }

  public ClusterConfig nodeConfig(String id) {
    return cluster.nodeConfig(id);
  }

  /**
   * The HTTP metrics port of node {@code id}; only for clusters started with {@link
   * #startWithMetrics}.
   */
  public int metricsPort(String id) {
    if (!withMetrics) {
      throw new IllegalStateException(
          "node " + id + " has no metrics port: start the cluster with startWithMetrics");
    }
    return cluster.nodeConfig(id).metricsPort();
  }

  public FencekeeperServer startNode(String id) {
    return startNode(id, UnaryOperator.identity());
  }

  /** Starts node {@code id} with its configuration changed by {@code adjust} (a clock offset). */
  public FencekeeperServer startNode(String id, UnaryOperator<ClusterConfig> adjust) {
    cluster.start(id, false, adjust);
    return node(id);
  }

  /**
   * Starts node {@code id} outside this cluster's bookkeeping (with {@code --join} when {@code
   * join}), its state machine applying no entry until {@code gate} opens: a member that receives
   * the log but stays behind in applying it. The caller closes the server it returns.
   */
  public FencekeeperServer startHoldingApplies(String id, boolean join, CountDownLatch gate)
      throws IOException {
    return FencekeeperServer.start(
        nodeConfig(id),
        join,
        (limits, wallClock, nanos) ->
            new FencingStateMachine(limits, wallClock, nanos) {
              @Override
              public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
                try {
                  gate.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                return super.applyTransaction(trx);
              }
            });
  }

  public void stopNode(String id) {
    cluster.stop(id);
  }

  /**
   * The first half of the documented way back for a member that lost its storage: stops node {@code
   * id}, deletes its whole storage.dir (Raft log and cluster identity alike) and removes it from
   * the membership ({@code fencekeeper members remove}). A member restarted on such storage without
   * {@code --join} is refused ({@code ClusterIdentityClusterTest}); {@link #rejoin} brings it back
   * as a new member with an empty log.
   */
  public void stopWipeAndRemove(String id) {
    Path storage = nodeConfig(id).storageDir();
    stopNode(id);
    try {
      deleteTree(storage);
      Files.createDirectories(storage);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try (FencingAdmin admin = FencingAdmin.connect(config())) {
      admin.removeMember(id);
    }
  }

  /**
   * The second half of the way back: starts node {@code id} with {@code --join} and adds it ({@code
   * fencekeeper members add}), which returns once it serves.
   */
  public FencekeeperServer rejoin(String id) {
    cluster.start(id, true);
    addMember(id);
    return node(id);
  }

  /** Adds node {@code id}, already running to join, as a member; returns once it serves. */
  public void addMember(String id) {
    try (FencingAdmin admin = FencingAdmin.connect(config())) {
      admin.addMember(nodeConfig(id).self());
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  public void stopAll() {
    for (String id : cluster.runningIds()) {
      stopNode(id);
    }
  }

  /** Node {@code id}'s server while it runs; null when it does not. */
  public FencekeeperServer node(String id) {
    return cluster.server(id).orElse(null);
  }

  /** The servers running now, by node id. */
  public Map<String, FencekeeperServer> running() {
    Map<String, FencekeeperServer> running = new LinkedHashMap<>();
    for (String id : cluster.runningIds()) {
      cluster.server(id).ifPresent(server -> running.put(id, server));
    }
    return running;
  }

  public FencingClient newClient(String owner) {
    FencingClient client = FencingClient.connect(config(), owner);
    clients.add(client);
    return client;
  }

  /** The id of the node that currently believes it leads with its leadership ready, if any. */
  public Optional<String> leader() {
    for (Map.Entry<String, FencekeeperServer> e : running().entrySet()) {
      try {
        RaftServer.Division d = e.getValue().raftServer().getDivision(RaftConfig.groupId(config()));
        if (d.getInfo().isLeader() && d.getInfo().isLeaderReady()) {
          return Optional.of(e.getKey());
        }
      } catch (IOException ignored) {
        // a node that is starting or stopping is not the leader
      }
    }
    return Optional.empty();
  }

  public String awaitLeader() {
    return await()
        .atMost(Duration.ofSeconds(30))
        .until(this::leader, Optional::isPresent)
        .orElseThrow();
  }

  public long lastApplied(String id) {
    try {
      return node(id)
          .raftServer()
          .getDivision(RaftConfig.groupId(config()))
          .getInfo()
          .getLastAppliedIndex();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Moves leadership to {@code to} and waits until it is ready to serve there. */
  public void transferLeadership(String to) {
    try (FencingAdmin admin = FencingAdmin.connect(config())) {
      admin.transferLeadership(to);
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> leader().filter(to::equals).isPresent());
  }

  /**
   * Takes a snapshot on every running node; returns each node's snapshot index (entries applied
   * later, such as the leader's takeover and tick entries, are not in it).
   */
  public Map<String, Long> snapshotAll() {
    Map<String, Long> indexes = new LinkedHashMap<>();
    running()
        .forEach(
            (id, s) -> {
              try {
                indexes.put(id, s.stateMachine().takeSnapshot());
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });
    return indexes;
  }

  @Override
  public void close() {
    for (FencingClient c : clients) {
      c.close();
    }
    cluster.close();
  }
}
