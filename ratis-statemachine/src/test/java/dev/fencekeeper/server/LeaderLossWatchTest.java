package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.metrics.NodeMetric;
import dev.fencekeeper.testing.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.util.CodeInjectionForTesting;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LeaderLossWatchTest {

  /** Ratis's injection point at the start of a follower's appendEntries. */
  private static final String RATIS_APPEND_ENTRIES = "RaftServerImpl.appendEntries";

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

  @Test
  void theVoterFurthestAheadStandsTheLowestIdAmongEqualsAndNoneWhenNoneIsAhead() {
    TermIndex own = TermIndex.valueOf(4, 100);
    RaftPeerId n1 = RaftPeerId.valueOf("n1");
    RaftPeerId n2 = RaftPeerId.valueOf("n2");
    RaftPeerId n3 = RaftPeerId.valueOf("n3");
    assertThat(LeaderLossWatch.furthestAhead(own, Map.of(n2, TermIndex.valueOf(4, 101))))
        .contains(n2);
    assertThat(
            LeaderLossWatch.furthestAhead(
                own, Map.of(n2, TermIndex.valueOf(4, 101), n3, TermIndex.valueOf(5, 90))))
        .as("a later term wins over a longer log of an earlier one")
        .contains(n3);
    assertThat(
            LeaderLossWatch.furthestAhead(
                own, Map.of(n3, TermIndex.valueOf(4, 102), n1, TermIndex.valueOf(4, 102))))
        .contains(n1);
    assertThat(LeaderLossWatch.furthestAhead(own, Map.of(n2, TermIndex.valueOf(4, 100))))
        .as("an equal log: this node stands")
        .isEmpty();
    assertThat(LeaderLossWatch.furthestAhead(own, Map.of(n2, TermIndex.valueOf(3, 500)))).isEmpty();
    assertThat(LeaderLossWatch.furthestAhead(own, Map.of())).isEmpty();
  }

  /**
   * The successor's log is behind the other follower's when the leader stops (it refuses every
   * append that carries entries meanwhile): had it stood, the other follower would have refused its
   * vote and stood itself only after its 3-4 s election timeout. It asks the other to stand
   * instead, which is leader well before that timeout.
   */
  @Test
  void aSuccessorWhoseLogIsBehindAsksTheFollowerAheadToStand(@TempDir Path dir) throws Exception {
    Properties slowTimeouts = new Properties();
    slowTimeouts.setProperty("raft.election.timeout.min", "3s");
    slowTimeouts.setProperty("raft.election.timeout.max", "4s");
    AtomicReference<String> behind = new AtomicReference<>();
    CodeInjectionForTesting.put(
        RATIS_APPEND_ENTRIES,
        (localId, remoteId, args) -> {
          if (String.valueOf(localId).equals(behind.get())
              && args.length > 1
              && args[1] instanceof AppendEntriesRequestProto append
              && append.getEntriesCount() > 0) {
            throw new IllegalStateException("test: this follower falls behind");
          }
          return false;
        });
    try (TestCluster cluster = TestCluster.start(dir, slowTimeouts)) {
      Roles roles = Roles.of(cluster.awaitLeader());
      String leader = roles.leader();
      String successor = roles.successor();
      String other = roles.other();
      behind.set(successor);
      FencingClient client = cluster.newClient("ahead");
      client.acquireToken("written-past-the-successor", Duration.ofMinutes(1), "w");
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> lastEntry(cluster, other).compareTo(lastEntry(cluster, successor)) > 0);

      // A stopping leader's port refuses connections only once its Raft server has closed, which
      // can take 3 s (docs/ratis-workarounds.md): the time counts from there.
      cluster.stopNode(leader);
      long stopped = System.nanoTime();
      await().atMost(Duration.ofSeconds(20)).until(() -> elected(cluster, other));
      assertThat(Duration.ofNanos(System.nanoTime() - stopped))
          .as("the other follower is elected before its own election timeout (3 s) could pass")
          .isLessThan(Duration.ofMillis(2_900));
      assertThat(electionsOnLeaderLoss(cluster, successor)).isEqualTo(1);
      // Its first entry needs the successor's append too, now that the old leader is gone.
      behind.set(null);
      await().atMost(Duration.ofSeconds(20)).until(cluster::leader, Optional.of(other)::equals);
    } finally {
      CodeInjectionForTesting.remove(RATIS_APPEND_ENTRIES);
    }
  }

  /** The leader of a three-node cluster, its successor and the remaining follower. */
  private record Roles(String leader, String successor, String other) {
    static Roles of(String leader) {
      String successor =
          LeaderLossWatch.successor(ids("n1", "n2", "n3"), RaftPeerId.valueOf(leader))
              .orElseThrow()
              .toString();
      String other =
          List.of("n1", "n2", "n3").stream()
              .filter(id -> !id.equals(leader) && !id.equals(successor))
              .findFirst()
              .orElseThrow();
      return new Roles(leader, successor, other);
    }
  }

  private static boolean elected(TestCluster cluster, String id) throws IOException {
    return division(cluster, id).getInfo().isLeader();
  }

  private static TermIndex lastEntry(TestCluster cluster, String id) throws IOException {
    return division(cluster, id).getRaftLog().getLastEntryTermIndex();
  }

  private static RaftServer.Division division(TestCluster cluster, String id) throws IOException {
    return cluster.node(id).raftServer().getDivision(RaftConfig.groupId(cluster.config()));
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
      Roles roles = Roles.of(cluster.awaitLeader());
      String leader = roles.leader();
      String successor = roles.successor();
      String other = roles.other();

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
