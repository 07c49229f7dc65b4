package dev.fencekeeper.server.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a {@link LocalCluster} is built with, before any node starts. */
class LocalClusterBuilderTest {
  @TempDir Path dir;

  // Guarantee: with ports picked free, no two nodes share a Raft, client, gateway or metrics port.
  @Test
  void freePortsAreDistinctAcrossNodes() {
    LocalCluster cluster = LocalCluster.builder(dir).nodes(5).metricsPorts(true).build();

    List<Integer> ports = new ArrayList<>();
    for (String id : cluster.nodeIds()) {
      ClusterConfig node = cluster.nodeConfig(id);
      ports.addAll(
          List.of(node.self().port(), node.clientPort(), node.httpPort(), node.metricsPort()));
      assertThat(node.self().host()).isEqualTo("127.0.0.1");
    }
    assertThat(cluster.nodeIds()).containsExactly("n1", "n2", "n3", "n4", "n5");
    assertThat(ports).hasSize(20).doesNotHaveDuplicates().doesNotContain(0);
  }

  // Guarantee: a base port gives consecutive Raft ports and up's metrics ports (+100); the data
  // of each node is in its own directory, its config file and log file beside it.
  @Test
  void basePortGivesConsecutivePorts() {
    int base = LocalPorts.freeBasePort(3, 100);
    LocalCluster cluster = LocalCluster.builder(dir).basePort(base).metricsPorts(true).build();

    for (int i = 1; i <= 3; i++) {
      String id = "n" + i;
      ClusterConfig node = cluster.nodeConfig(id);
      assertThat(node.self()).isEqualTo(new PeerAddress(id, "127.0.0.1", base + i - 1));
      assertThat(node.metricsPort()).isEqualTo(base + i - 1 + 100);
      assertThat(node.storageDir()).isEqualTo(dir.resolve(id));
      assertThat(cluster.configFile(id)).isEqualTo(dir.resolve(id + ".properties"));
      assertThat(cluster.logFile(id)).isEqualTo(dir.resolve(id).resolve("node.log"));
    }
    assertThat(cluster.peers())
        .isEqualTo(
            "n1@127.0.0.1:" + base + ",n2@127.0.0.1:" + (base + 1) + ",n3@127.0.0.1:" + (base + 2));
  }

  // Guarantee: the properties given reach every node, and the cluster as a client sees it has no
  // node's own settings.
  @Test
  void propertiesReachEveryNode() {
    LocalCluster cluster =
        LocalCluster.builder(dir)
            .property("cluster.name", "builder-test")
            .metricsPorts(true)
            .build();

    for (String id : cluster.nodeIds()) {
      assertThat(cluster.nodeConfig(id).clusterName()).isEqualTo("builder-test");
      assertThat(cluster.nodeConfig(id).nodeId()).hasValue(id);
    }
    assertThat(cluster.config().clusterName()).isEqualTo("builder-test");
    assertThat(cluster.config().nodeId()).isEmpty();
    assertThat(cluster.config().metricsPort()).isNotEqualTo(cluster.nodeConfig("n1").metricsPort());
    assertThat(cluster.clientAddresses())
        .containsExactly(
            cluster.clientAddress("n1"), cluster.clientAddress("n2"), cluster.clientAddress("n3"));
  }

  // Guarantee: a node defined later (one to join) is in the cluster's client view until it is
  // removed; an empty cluster has no client view.
  @Test
  void nodesDefinedLaterJoinTheClientView() {
    LocalCluster cluster = LocalCluster.builder(dir).nodes(0).build();
    assertThatThrownBy(cluster::config).isInstanceOf(IllegalStateException.class);

    String peers = "n1@127.0.0.1:17001,n2@127.0.0.1:17002";
    cluster.add(ClusterConfig.forPeers(peers).withNodeId("n1").withStorageDir(dir.resolve("n1")));
    cluster.add(ClusterConfig.forPeers(peers).withNodeId("n2").withStorageDir(dir.resolve("n2")));
    assertThat(cluster.config().peers()).extracting(PeerAddress::id).containsExactly("n1", "n2");

    cluster.remove("n2");
    assertThat(cluster.config().peers()).extracting(PeerAddress::id).containsExactly("n1");
    assertThat(cluster.nodeIds()).containsExactly("n1");
  }
}
