package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.server.FencekeeperServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;

/**
 * Three real nodes in the test JVM on free loopback ports, data under a directory the test owns. The
 * cluster keeps the default name, so the CLI's {@code --peers} (which cannot name a cluster) reaches it.
 */
final class InProcessCluster implements AutoCloseable {
  private final ClusterConfig config;
  private final Path dataDir;
  private final List<FencekeeperServer> servers = new ArrayList<>();

  private InProcessCluster(ClusterConfig config, Path dataDir) {
    this.config = config;
    this.dataDir = dataDir;
  }

  static InProcessCluster start(Path dataDir) throws IOException {
    return start(dataDir, false);
  }

  /** As {@link #start(Path)}, each node also serving {@code /metrics} on a free port of its own. */
  static InProcessCluster startWithMetrics(Path dataDir) throws IOException {
    return start(dataDir, true);
  }

  private static InProcessCluster start(Path dataDir, boolean withMetrics) throws IOException {
    String peers = List.of(freePort(), freePort(), freePort()).stream()
        .map(port -> "127.0.0.1:" + port)
        .collect(Collectors.joining(","));
    InProcessCluster cluster = new InProcessCluster(ClusterConfig.forPeers(peers), dataDir);
    try {
      for (PeerAddress peer : cluster.config.peers()) {
        ClusterConfig node = cluster.config.withNodeId(peer.id()).withStorageDir(dataDir.resolve(peer.id()));
        cluster.servers.add(FencekeeperServer.start(withMetrics ? node.withMetricsPort(freePort()) : node));
      }
      cluster.awaitLeader();
    } catch (IOException | RuntimeException e) {
      cluster.close();
      throw e;
    }
    return cluster;
  }

  /** The --peers value that reaches this cluster. */
  String peers() {
    return config.peers().stream().map(PeerAddress::address).collect(Collectors.joining(","));
  }

  ClusterConfig config() {
    return config;
  }

  /** The --peers value naming every member with its id: {@code n1@127.0.0.1:p1,...}. */
  String peersWithIds() {
    return config.peers().stream().map(PeerAddress::toString).collect(Collectors.joining(","));
  }

  /**
   * Starts a new node {@code id} on a free port without the group (as {@code server --join} does), its peers
   * being this cluster's plus itself; {@link #close} stops it too. Returns its address.
   */
  PeerAddress startJoining(String id) throws IOException {
    PeerAddress peer = new PeerAddress(id, "127.0.0.1", freePort());
    ClusterConfig node = joiningConfig(peer).withStorageDir(dataDir.resolve(id));
    servers.add(FencekeeperServer.join(node));
    return peer;
  }

  /** Stops node {@code id} (one this cluster started), as a crash or shutdown would. */
  void stopNode(String id) throws IOException {
    for (FencekeeperServer server : List.copyOf(servers)) {
      if (server.config().self().id().equals(id)) {
        servers.remove(server);
        server.close();
      }
    }
  }

  /** The config of new member {@code peer}: this cluster's peers plus it, with its node id set. */
  ClusterConfig joiningConfig(PeerAddress peer) {
    return ClusterConfig.forPeers(peersWithIds() + "," + peer).withNodeId(peer.id());
  }

  private void awaitLeader() {
    try (FencingClient client = FencingClient.connect(config)) {
      Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() ->
          ClusterProbe.leader(ClusterProbe.probe(client, config, Duration.ofSeconds(1))).isPresent());
    }
  }

  static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    for (FencekeeperServer server : servers) {
      try {
        server.close();
      } catch (IOException | RuntimeException e) {
        // Keep closing the others; a node that fails to stop must not leave the rest running.
        System.err.println("closing a test node failed: " + e);
      }
    }
    servers.clear();
  }

  /** Runs a CLI verb against this cluster (its {@code --peers} appended), in the data directory. */
  CliRun cli(String... args) {
    List<String> withPeers = new ArrayList<>(List.of(args));
    withPeers.add("--peers");
    withPeers.add(peers());
    return CliRun.run(dataDir, withPeers.toArray(String[]::new));
  }
}
