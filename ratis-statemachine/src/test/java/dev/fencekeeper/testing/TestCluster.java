package dev.fencekeeper.testing;

import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.statemachine.RestoreSeed;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;

/**
 * Three real Ratis nodes in this JVM on loopback ports picked here, with data under a directory the
 * test owns. Each node serves the client protocol on its client port ({@link #clientAddress}).
 * Always close it: it stops every node and client it started.
 */
public final class TestCluster implements AutoCloseable {
  private final ClusterConfig config;
  private final Path dataDir;
  private final Map<String, FencekeeperServer> running = new LinkedHashMap<>();
  private final List<FencingClient> clients = new ArrayList<>();
  // Per-node HTTP metrics ports; empty unless started with startWithMetrics.
  private final Map<String, Integer> metricsPorts = new LinkedHashMap<>();

  private TestCluster(ClusterConfig config, Path dataDir) {
    this.config = config;
    this.dataDir = dataDir;
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
    Properties p = new Properties();
    StringBuilder peers = new StringBuilder();
    for (int i = 1; i <= 3; i++) {
      if (i > 1) {
        peers.append(',');
      }
      peers.append("n").append(i).append("@127.0.0.1:").append(LocalPorts.freeNodePort());
    }
    p.setProperty("peers", peers.toString());
    p.setProperty("cluster.name", "test-" + dataDir.getFileName());
    p.putAll(extra);
    TestCluster cluster = new TestCluster(ClusterConfig.fromProperties(p), dataDir);
    if (withMetrics) {
      List<Integer> taken = new ArrayList<>();
      cluster.config.peers().forEach(peer -> taken.add(peer.port()));
      cluster.config.clientAddresses().forEach(client -> taken.add(client.port()));
      for (int i = 1; i <= 3; i++) {
        int port = freePort();
        while (taken.contains(port)) {
          port = freePort();
        }
        taken.add(port);
        cluster.metricsPorts.put("n" + i, port);
      }
    }
    if (backup != null) {
      for (int i = 1; i <= 3; i++) {
        try {
          RestoreSeed.seed(backup, dataDir.resolve("n" + i), cluster.config.limits());
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    for (int i = 1; i <= 3; i++) {
      cluster.startNode("n" + i);
    }
    return cluster;
  }

  public static TestCluster start(Path dataDir) {
    return start(dataDir, new Properties());
  }

  public ClusterConfig config() {
    return config;
  }

  /**
   * The client address (host:port) of node {@code id}: its Raft port + {@value
   * ClusterConfig#CLIENT_PORT_OFFSET}, as {@link ClusterConfig#clientAddresses()} derives it.
   */
  public String clientAddress(String id) {
    return config.clientAddresses().stream()
        .filter(a -> a.id().equals(id))
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no node " + id))
        .address();
  }

  /** Every node's client address, in node order (n1, n2, n3). */
  public List<String> clientAddresses() {
    return config.clientAddresses().stream().map(a -> a.address()).toList();
  }

  public ClusterConfig nodeConfig(String id) {
    ClusterConfig node = config.withNodeId(id).withStorageDir(dataDir.resolve(id));
    Integer metricsPort = metricsPorts.get(id);
    return metricsPort == null ? node : node.withMetricsPort(metricsPort);
  }

  /**
   * The HTTP metrics port of node {@code id}; only for clusters started with {@link
   * #startWithMetrics}.
   */
  public int metricsPort(String id) {
    Integer port = metricsPorts.get(id);
    if (port == null) {
      throw new IllegalStateException(
          "node " + id + " has no metrics port: start the cluster with startWithMetrics");
    }
    return port;
  }

  public FencekeeperServer startNode(String id) {
    return startNode(id, UnaryOperator.identity());
  }

  /** Starts node {@code id} with its configuration changed by {@code adjust} (a clock offset). */
  public FencekeeperServer startNode(String id, UnaryOperator<ClusterConfig> adjust) {
    try {
      FencekeeperServer server = FencekeeperServer.start(adjust.apply(nodeConfig(id)));
      running.put(id, server);
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public void stopNode(String id) {
    FencekeeperServer server = running.remove(id);
    if (server != null) {
      try {
        server.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  public void stopAll() {
    for (String id : List.copyOf(running.keySet())) {
      stopNode(id);
    }
  }

  public FencekeeperServer node(String id) {
    return running.get(id);
  }

  public Map<String, FencekeeperServer> running() {
    return running;
  }

  public FencingClient newClient(String owner) {
    FencingClient client = FencingClient.connect(config, owner);
    clients.add(client);
    return client;
  }

  /** The id of the node that currently believes it leads with its leadership ready, if any. */
  public Optional<String> leader() {
    for (Map.Entry<String, FencekeeperServer> e : running.entrySet()) {
      try {
        RaftServer.Division d = e.getValue().raftServer().getDivision(config.groupId());
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
      return running
          .get(id)
          .raftServer()
          .getDivision(config.groupId())
          .getInfo()
          .getLastAppliedIndex();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Moves leadership to {@code to} and waits until it is ready to serve there. */
  public void transferLeadership(String to) {
    try (RaftClient admin =
        RaftClient.newBuilder()
            .setRaftGroup(config.raftGroup())
            .setProperties(config.clientProperties())
            .build()) {
      RaftClientReply reply = admin.admin().transferLeadership(RaftPeerId.valueOf(to), 10_000);
      if (!reply.isSuccess()) {
        throw new IllegalStateException("transfer to " + to + " failed: " + reply.getException());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> leader().filter(to::equals).isPresent());
  }

  /**
   * Takes a snapshot on every running node; returns each node's snapshot index (entries applied
   * later, such as the leader's takeover and tick entries, are not in it).
   */
  public Map<String, Long> snapshotAll() {
    Map<String, Long> indexes = new LinkedHashMap<>();
    running.forEach(
        (id, s) -> {
          try {
            indexes.put(id, s.stateMachine().takeSnapshot());
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
    return indexes;
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    for (FencingClient c : clients) {
      c.close();
    }
    stopAll();
  }
}
