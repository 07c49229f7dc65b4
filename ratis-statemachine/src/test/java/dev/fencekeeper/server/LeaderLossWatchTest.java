package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.metrics.NodeMetric;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LeaderLossWatchTest {

  private static List<RaftPeerId> ids(String... ids) {
    return List.of(ids).stream().map(RaftPeerId::valueOf).toList();
  }

  @Test
  void theSuccessorIsTheNextVoterAfterTheLeaderInIdOrderWrappingAround() {
    assertThat(LeaderLossWatch.successor(ids("n3", "n1", "n2"), RaftPeerId.valueOf("n1")))
        .contains(RaftPeerId.valueOf("n2"));
    assertThat(LeaderLossWatch.successor(ids("n1", "n2", "n3"), RaftPeerId.valueOf("n2")))
        .contains(RaftPeerId.valueOf("n3"));
    assertThat(LeaderLossWatch.successor(ids("n1", "n2", "n3"), RaftPeerId.valueOf("n3")))
        .contains(RaftPeerId.valueOf("n1"));
    assertThat(LeaderLossWatch.successor(ids("a", "c", "e", "g"), RaftPeerId.valueOf("d")))
        .as("a leader no longer among the voters")
        .contains(RaftPeerId.valueOf("e"));
    assertThat(LeaderLossWatch.successor(ids("n1"), RaftPeerId.valueOf("n1"))).isEmpty();
  }

  /**
   * Election timeouts of 3-4 s: a follower that waited for one could not be leader before 3 s; the
   * successor starts its election as soon as the stopped leader's port refuses connections, and the
   * counter shows that it did (and the other follower did not).
   */
  @Test
  void whenTheLeaderIsGoneItsSuccessorStartsTheElectionAtOnce(@TempDir Path dir) {
    Properties slowTimeouts = new Properties();
    slowTimeouts.setProperty("raft.election.timeout.min", "3s");
    slowTimeouts.setProperty("raft.election.timeout.max", "4s");
    try (TestCluster cluster = TestCluster.start(dir, slowTimeouts)) {
      String leader = cluster.awaitLeader();
      String successor =
          LeaderLossWatch.successor(ids("n1", "n2", "n3"), RaftPeerId.valueOf(leader))
              .orElseThrow()
              .toString();
      String other =
          List.of("n1", "n2", "n3").stream()
              .filter(id -> !id.equals(leader) && !id.equals(successor))
              .findFirst()
              .orElseThrow();

      cluster.stopNode(leader);

      await().atMost(Duration.ofSeconds(20)).until(cluster::leader, Optional.of(successor)::equals);
      assertThat(electionsOnLeaderLoss(cluster, successor)).isEqualTo(1);
      assertThat(electionsOnLeaderLoss(cluster, other)).isZero();
    }
  }

  private static long electionsOnLeaderLoss(TestCluster cluster, String id) {
    return cluster
        .node(id)
        .metrics()
        .registry()
        .counter(NodeMetric.ELECTIONS_ON_LEADER_LOSS.dropwizardName())
        .getCount();
  }
}
