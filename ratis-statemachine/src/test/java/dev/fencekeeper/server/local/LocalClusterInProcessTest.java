package dev.fencekeeper.server.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.server.FencekeeperServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The in-process flavour of {@link LocalCluster}. */
class LocalClusterInProcessTest {
  @TempDir Path dir;

  // Guarantee: the nodes start on the ports of their configs and elect a leader among them.
  @Test
  void startsAndElects() {
    try (LocalCluster cluster = LocalCluster.builder(dir).start()) {
      String leader = cluster.awaitLeader(Duration.ofSeconds(60));

      assertThat(cluster.nodeIds()).containsExactly("n1", "n2", "n3").contains(leader);
      assertThat(cluster.runningIds()).containsExactly("n1", "n2", "n3");
      for (String id : cluster.nodeIds()) {
        assertThat(LocalPorts.isFree(cluster.nodeConfig(id).self().port())).as(id).isFalse();
        assertThat(cluster.server(id)).isPresent();
        assertThat(cluster.nodeConfig(id).storageDir()).isEqualTo(dir.resolve(id));
      }
      // On a loaded machine leadership may move between two calls: ask the leader of the moment.
      try (FencingClient client = FencingClient.connect(cluster.config(), "t")) {
        await()
            .atMost(Duration.ofSeconds(60))
            .untilAsserted(
                () -> {
                  String now = cluster.awaitLeader(Duration.ofSeconds(60));
                  assertThat(client.nodeStatus(now, Duration.ofSeconds(5)).isLeader()).isTrue();
                });
      }
    }
  }

  // Guarantee: a stopped node is gone (its ports are free) and the others elect without it; it
  // starts again on the same ports and data.
  @Test
  void stoppedNodeIsGoneAndStartsAgain() {
    try (LocalCluster cluster = LocalCluster.builder(dir).start()) {
      String leader = cluster.awaitLeader(Duration.ofSeconds(60));
      int raftPort = cluster.nodeConfig(leader).self().port();
      int clientPort = cluster.nodeConfig(leader).clientAddress().port();

      cluster.stop(leader);

      assertThat(cluster.isRunning(leader)).isFalse();
      assertThat(cluster.server(leader)).isEmpty();
      assertThat(LocalPorts.isFree(raftPort)).isTrue();
      assertThat(LocalPorts.isFree(clientPort)).isTrue();
      assertThat(cluster.awaitLeader(Duration.ofSeconds(60))).isNotEqualTo(leader);

      cluster.start(leader);
      assertThat(cluster.isRunning(leader)).isTrue();
      assertThat(LocalPorts.isFree(raftPort)).isFalse();
    }
  }

  // Guarantee: close stops every node even when one of them fails to stop, and says so.
  @Test
  void closeStopsEveryNodeWhenOneFailsToStop() throws IOException {
    List<FencekeeperServer> servers = new ArrayList<>();
    LocalCluster cluster =
        LocalCluster.builder(dir)
            .inProcess(
                (node, join) -> {
                  FencekeeperServer server = FencekeeperServer.start(node);
                  servers.add(server);
                  if (!node.self().id().equals("n1")) {
                    return server;
                  }
                  return () -> {
                    throw new IOException("n1 refuses to stop");
                  };
                })
            .start();
    List<Integer> ports = new ArrayList<>();
    for (String id : List.of("n2", "n3")) {
      ClusterConfig node = cluster.nodeConfig(id);
      ports.add(node.self().port());
      ports.add(node.clientAddress().port());
    }
    try {
      assertThat(ports).noneMatch(LocalPorts::isFree);

      assertThatThrownBy(cluster::close)
          .hasMessageContaining("n1")
          .hasRootCauseMessage("n1 refuses to stop");

      assertThat(ports).allMatch(LocalPorts::isFree);
      assertThat(cluster.runningIds()).isEmpty();
    } finally {
      for (FencekeeperServer server : servers) {
        server.close();
      }
    }
  }
}
