package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.server.local.LocalCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node knows its cluster: the id minted when three empty nodes form it, kept by every member; a
 * member that lost its storage, or runs on another cluster's, is refused before its Raft server
 * starts (so it never votes); a member of the first configuration that starts late, and a node
 * added with {@code --join}, take the cluster's id.
 */
@Timeout(180)
class ClusterIdentityClusterTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir Path dataDir;

  // Guarantee: three empty nodes form a cluster and all of them store one cluster id; a member
  // restarted without --join on storage that kept only its cluster id file (the Raft group
  // directory gone), and then on wiped storage, is refused with the way back each time and writes
  // no Raft storage (its Raft server never ran, so it cannot have voted); the way back (remove,
  // start with --join, add) works and the new member takes the cluster's id.
  @Test
  void aWipedMemberIsRefusedAndComesBackThroughJoin() throws Exception {
    try (LocalCluster cluster = cluster()) {
      cluster.startAll();
      cluster.awaitLeader(WAIT);
      String id = awaitOneClusterId(cluster);

      // The cluster has seen n3 hold its log before n3 loses it.
      Path n1Storage = cluster.nodeConfig("n1").storageDir();
      await().atMost(WAIT).until(() -> ClusterIdentity.open(n1Storage).hasSeen("n3"));
      cluster.stop("n3");
      Path n3Storage = cluster.nodeConfig("n3").storageDir();
      wipe(n3Storage.resolve(groupDir(cluster)));
      Files.delete(n3Storage.resolve(groupDir(cluster)));
      assertThat(ClusterIdentity.open(n3Storage).clusterId()).contains(id);

      assertThatThrownBy(() -> cluster.start("n3"))
          .hasRootCauseInstanceOf(ClusterRefusedException.class)
          .rootCause()
          .hasMessageContaining("node n3 refused to start")
          .hasMessageContaining("holds no Raft log")
          .hasMessageContaining("cluster " + id)
          .hasMessageContaining("`fencekeeper members remove n3`");
      assertThat(contents(n3Storage))
          .as("no Raft storage (term, vote, log) was written")
          .noneMatch(p -> p.getFileName().toString().equals(groupDir(cluster)));
      assertThat(cluster.isRunning("n3")).isFalse();

      wipe(n3Storage);
      assertThatThrownBy(() -> cluster.start("n3"))
          .hasRootCauseInstanceOf(ClusterRefusedException.class)
          .rootCause()
          .hasMessageContaining("node n3 refused to start")
          .hasMessageContaining("is empty")
          .hasMessageContaining("cluster " + id)
          .hasMessageContaining("`fencekeeper members remove n3`")
          .hasMessageContaining("--join")
          .hasMessageContaining("docs/operations.md");
      assertThat(contents(n3Storage))
          .as("no Raft storage (term, vote, log) was written")
          .noneMatch(p -> p.getFileName().toString().equals(groupDir(cluster)));
      assertThat(cluster.isRunning("n3")).isFalse();

      // The way back: remove it, start it with --join, add it.
      try (FencingAdmin admin = FencingAdmin.connect(cluster.config())) {
        admin.removeMember("n3");
        cluster.start("n3", true);
        admin.addMember(cluster.nodeConfig("n3").self());
      }
      FencekeeperServer n3 = cluster.server("n3").orElseThrow();
      await().atMost(WAIT).until(() -> n3.clusterId().equals(Optional.of(id)));
    }
  }

  // Guarantee: a node whose storage belongs to another cluster than its peers' is refused, naming
  // both ids.
  @Test
  void aNodeOnAnotherClustersStorageIsRefused() throws Exception {
    try (LocalCluster cluster = cluster()) {
      cluster.startAll();
      cluster.awaitLeader(WAIT);
      String id = awaitOneClusterId(cluster);
      cluster.stop("n3");
      Path n3Storage = cluster.nodeConfig("n3").storageDir();
      String other = ClusterIdentity.mint("elsewhere", 1, 1, 42);
      Files.writeString(n3Storage.resolve(ClusterIdentity.FILE_NAME), "cluster.id=" + other + "\n");

      assertThatThrownBy(() -> cluster.start("n3"))
          .hasRootCauseInstanceOf(ClusterRefusedException.class)
          .rootCause()
          .hasMessageContaining("belongs to cluster " + other)
          .hasMessageContaining("peer n1 belongs to cluster " + id);
      assertThat(cluster.isRunning("n3")).isFalse();
    }
  }

  // Guarantee: a member of the first configuration that starts only after the others formed the
  // cluster (its storage empty, never having held the log) is not mistaken for a wiped one: it
  // starts and takes the cluster's id.
  @Test
  void aLateFirstMemberStartsAndTakesTheClustersId() throws Exception {
    try (LocalCluster cluster = cluster()) {
      cluster.start("n1");
      cluster.start("n2");
      cluster.awaitLeader(WAIT);
      FencekeeperServer n1 = cluster.server("n1").orElseThrow();
      String id = await().atMost(WAIT).until(n1::clusterId, Optional::isPresent).orElseThrow();

      cluster.start("n3");
      FencekeeperServer n3 = cluster.server("n3").orElseThrow();
      assertThat(n3.clusterId()).contains(id);
    }
  }

  // Guarantee: a member added to a running cluster is recorded as seen by the members that were
  // there, though their cluster-id keepers had settled (id known, every member seen) and sleep
  // until the configuration changes: so that member, should it lose its storage, is refused too.
  @Test
  void aMemberAddedLaterIsSeenByTheSettledMembers() throws Exception {
    try (LocalCluster cluster = cluster()) {
      cluster.startAll();
      cluster.awaitLeader(WAIT);
      awaitOneClusterId(cluster);
      Path n1Storage = cluster.nodeConfig("n1").storageDir();
      await()
          .atMost(WAIT)
          .until(
              () -> {
                ClusterIdentity n1 = ClusterIdentity.open(n1Storage);
                return n1.hasSeen("n1") && n1.hasSeen("n2") && n1.hasSeen("n3");
              });

      PeerAddress n4 = new PeerAddress("n4", "127.0.0.1", LocalPorts.freeNodePort());
      List<PeerAddress> four = new ArrayList<>(cluster.config().peers());
      four.add(n4);
      try (FencekeeperServer node = FencekeeperServer.join(nodeConfig(cluster, four, "n4"));
          FencingAdmin admin = FencingAdmin.connect(cluster.config())) {
        admin.addMember(n4);
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() -> ClusterIdentity.open(n1Storage).hasSeen("n4"));
      }
    }
  }

  /** Node {@code id} of the cluster as it will be ({@code peers}), with its own storage. */
  private ClusterConfig nodeConfig(LocalCluster cluster, List<PeerAddress> peers, String id) {
    Properties p = cluster.config().toProperties();
    p.setProperty(
        "peers", peers.stream().map(PeerAddress::toString).collect(Collectors.joining(",")));
    p.setProperty("node.id", id);
    p.setProperty("storage.dir", dataDir.resolve(id).toString());
    return ClusterConfig.fromProperties(p);
  }

  private LocalCluster cluster() {
    return LocalCluster.builder(dataDir)
        .property("cluster.name", "test-" + dataDir.getFileName())
        .build();
  }

  /** Waits until every running node knows a cluster id, and returns the one they all know. */
  private static String awaitOneClusterId(LocalCluster cluster) {
    return await()
        .atMost(WAIT)
        .until(
            () -> {
              Set<Optional<String>> ids = new HashSet<>();
              for (String node : cluster.runningIds()) {
                ids.add(cluster.server(node).orElseThrow().clusterId());
              }
              return ids;
            },
            ids -> ids.size() == 1 && ids.iterator().next().isPresent())
        .iterator()
        .next()
        .orElseThrow();
  }

  private static void wipe(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        if (!p.equals(dir)) {
          Files.delete(p);
        }
      }
    }
  }

  private static String groupDir(LocalCluster cluster) {
    return RaftConfig.groupId(cluster.config()).getUuid().toString();
  }

  private static java.util.List<Path> contents(Path dir) {
    try (Stream<Path> list = Files.list(dir)) {
      return list.toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
