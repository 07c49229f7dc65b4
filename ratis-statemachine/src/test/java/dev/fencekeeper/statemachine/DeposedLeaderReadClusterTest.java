package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.server.RaftConfig;
import dev.fencekeeper.testing.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.CodeInjectionForTesting;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A leader cut off from its followers keeps believing it leads until it notices their silence,
 * while they elect a new leader that takes commands. A linearizable read that reaches the old
 * leader in between must not be answered from its old state: a service that fences its own writes
 * with {@code validate} would accept a token that was revoked and replaced.
 *
 * <p>Ratis answers a read index at once when a heartbeat round has already confirmed the commit
 * index it reads at, with no round of its own, so a deposed leader whose commit index stands still
 * passes every such read (docs/ratis-workarounds.md).
 */
@Isolated("Ratis's code injection points are shared by every server in the JVM")
@Timeout(120)
class DeposedLeaderReadClusterTest {
  private static final String RESOURCE = "invoice-7";
  // Ratis's own names of the injection points where a server receives heartbeats and entries, and
  // vote requests (package-private constants of its RaftServerImpl).
  private static final String APPEND_ENTRIES = "RaftServerImpl.appendEntries";
  private static final String REQUEST_VOTE = "RaftServerImpl.requestVote";

  @TempDir Path dir;

  @Test
  void aLeaderCutOffFromItsFollowersDoesNotConfirmARevokedToken() throws Exception {
    // The followers wait 200-400 ms for a heartbeat before they elect a new leader. The leader
    // (node n1, restarted with a max of 6 s and given the lead) sends heartbeats every 100 ms and
    // steps down only after 6-12 s without its followers' answers (checked every max): it believes
    // it leads for seconds after the new leader serves.
    Properties p = new Properties();
    p.setProperty("raft.election.timeout.min", "200ms");
    p.setProperty("raft.election.timeout.max", "400ms");
    try (TestCluster cluster = TestCluster.start(dir, p)) {
      String old = "n1";
      cluster.awaitLeader();
      cluster.stopNode(old);
      cluster.startNode(old, c -> withElectionTimeoutMax(c, "6s"));
      String leader = cluster.awaitLeader();
      long applied = cluster.lastApplied(leader);
      await().atMost(Duration.ofSeconds(30)).until(() -> cluster.lastApplied(old) >= applied);
      cluster.transferLeadership(old);
      FencingClient viaOld = pinnedTo(cluster, old, "checker");
      FencingClient worker = cluster.newClient("worker");
      long token = worker.acquireToken(RESOURCE, Duration.ofMinutes(5), "worker-a").token();
      assertThat(viaOld.validate(RESOURCE, token).code()).isEqualTo(ResultCode.CURRENT);
      cutOff(old);
      try {
        String next =
            await()
                .atMost(Duration.ofSeconds(30))
                .until(() -> leaderBesides(cluster, old), Optional::isPresent)
                .orElseThrow();
        FencingClient viaNext = pinnedTo(cluster, next, "admin");
        assertThat(viaNext.revoke(RESOURCE, "worker-a stalled").code())
            .isEqualTo(ResultCode.REVOKED);
        assertThat(leads(cluster, old)).as("the old leader still believes it leads").isTrue();

        Result answer = viaOld.validate(RESOURCE, token);

        assertThat(answer.code())
            .as("validate of a revoked token through the deposed leader: %s", answer.message())
            .isNotEqualTo(ResultCode.CURRENT);
        viaNext.close();
      } finally {
        CodeInjectionForTesting.remove(APPEND_ENTRIES);
        CodeInjectionForTesting.remove(REQUEST_VOTE);
        viaOld.close();
      }
    }
  }

  /**
   * Drops every heartbeat and entry between {@code leader} and the other nodes, and every vote
   * request it would receive, as a network partition would; clients still reach every node.
   */
  private static void cutOff(String leader) {
    CodeInjectionForTesting.Code dropped =
        (local, remote, args) -> {
          if (leader.equals(local.toString()) || leader.equals(remote.toString())) {
            throw new IllegalStateException("partitioned from " + leader);
          }
          return false;
        };
    CodeInjectionForTesting.put(APPEND_ENTRIES, dropped);
    CodeInjectionForTesting.put(REQUEST_VOTE, dropped);
  }

  private static ClusterConfig withElectionTimeoutMax(ClusterConfig config, String max) {
    Properties p = config.toProperties();
    p.setProperty("raft.election.timeout.max", max);
    return ClusterConfig.fromProperties(p);
  }

  private static boolean leads(TestCluster cluster, String id) throws IOException {
    return division(cluster, id).getInfo().isLeader();
  }

  /** A node other than {@code old} that leads and is ready to serve. */
  private static Optional<String> leaderBesides(TestCluster cluster, String old)
      throws IOException {
    for (String id : cluster.running().keySet()) {
      RaftServer.Division d = division(cluster, id);
      if (!id.equals(old) && d.getInfo().isLeader() && d.getInfo().isLeaderReady()) {
        return Optional.of(id);
      }
    }
    return Optional.empty();
  }

  private static RaftServer.Division division(TestCluster cluster, String id) throws IOException {
    return cluster.node(id).raftServer().getDivision(RaftConfig.groupId(cluster.config()));
  }

  /** A client that knows only node {@code id}. */
  private static FencingClient pinnedTo(TestCluster cluster, String id, String owner) {
    PeerAddress peer =
        cluster.config().peers().stream().filter(a -> a.id().equals(id)).findFirst().orElseThrow();
    return FencingClient.builder()
        .peers(peer.id() + "@" + peer.host() + ":" + peer.port())
        .clusterName(cluster.config().clusterName())
        .owner(owner)
        .requestTimeout(Duration.ofSeconds(3))
        .callTimeout(Duration.ofSeconds(5))
        .build();
  }
}
