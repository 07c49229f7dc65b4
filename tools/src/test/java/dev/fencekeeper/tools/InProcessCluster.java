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
  private final List<FencekeeperServer> servers = new ArrayList<>();

  private InProcessCluster(ClusterConfig config) {
    this.config = config;
  }

  static InProcessCluster start(Path dataDir) throws IOException {
    String peers = List.of(freePort(), freePort(), freePort()).stream()
        .map(port -> "127.0.0.1:" + port)
        .collect(Collectors.joining(","));
    InProcessCluster cluster = new InProcessCluster(ClusterConfig.forPeers(peers));
    try {
      for (PeerAddress peer : cluster.config.peers()) {
        cluster.servers.add(FencekeeperServer.start(
            cluster.config.withNodeId(peer.id()).withStorageDir(dataDir.resolve(peer.id()))));
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
}
