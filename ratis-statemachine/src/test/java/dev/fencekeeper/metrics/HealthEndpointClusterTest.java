package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.RaftConfig;
import dev.fencekeeper.testing.TestCluster;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code /health} readiness, and the exporters' lifecycle, on three in-process nodes. */
@Timeout(120)
class HealthEndpointClusterTest {
  @TempDir Path dataDir;
  TestCluster cluster;

  @BeforeEach
  void startCluster() {
    cluster = TestCluster.startWithMetrics(dataDir, new Properties());
  }

  @AfterEach
  void stopCluster() {
    cluster.close();
  }

  private List<String> followersOf(String leader) {
    return cluster.running().keySet().stream().filter(id -> !id.equals(leader)).toList();
  }

  // Guarantee: every node of a healthy cluster answers /health with 200 "ready".
  @Test
  void healthyNodesAreReady() {
    cluster.awaitLeader();
    for (String id : List.of("n1", "n2", "n3")) {
      await()
          .atMost(Duration.ofSeconds(15))
          .untilAsserted(
              () -> {
                Scrape.Reply reply = Scrape.get(cluster.metricsPort(id), "/health");
                assertThat(reply.status()).as(id).isEqualTo(200);
                assertThat(reply.body()).isEqualTo("ready\n");
              });
    }
  }

  // Guarantee: a node cut off from the leader (the leader and the other follower stopped) stops
  // being ready once its election timeout passes — 503 with a one-line reason — while /metrics
  // keeps serving; when the others return it is ready again.
  @Test
  void nodeCutOffFromTheLeaderIsNotReady() {
    String leader = cluster.awaitLeader();
    List<String> followers = followersOf(leader);
    String survivor = followers.get(0);
    int port = cluster.metricsPort(survivor);
    await().atMost(Duration.ofSeconds(15)).until(() -> Scrape.get(port, "/health").status() == 200);

    cluster.stopNode(leader);
    cluster.stopNode(followers.get(1));

    await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () -> {
              Scrape.Reply reply = Scrape.get(port, "/health");
              assertThat(reply.status()).isEqualTo(503);
              assertThat(reply.body()).startsWith("not ready: no leader known").endsWith("\n");
              assertThat(reply.body().strip()).doesNotContain("\n");
            });
    assertThat(Scrape.metrics(port)).containsEntry("fencekeeper_raft_leader_known", 0.0);

    cluster.startNode(leader);
    cluster.startNode(followers.get(1));
    await().atMost(Duration.ofSeconds(30)).until(() -> Scrape.get(port, "/health").status() == 200);
  }

  // Guarantee: a node restarted after missing writes is not ready while its applied index is more
  // than health.max-apply-lag entries behind the leader's commit index, even though it knows the
  // leader (the reason names both indexes); once it has applied them it is ready. Its applies are
  // held back by a gate so the "behind" window is as long as the test needs.
  @Test
  void restartedNodeIsNotReadyUntilCaughtUp() throws Exception {
    String leader = cluster.awaitLeader();
    String lagging = followersOf(leader).get(0);
    int port = cluster.metricsPort(lagging);
    cluster.snapshotAll();
    cluster.stopNode(lagging);
    writeMany(20);

    CountDownLatch gate = new CountDownLatch(1);
    FencekeeperServer restarted = cluster.startHoldingApplies(lagging, false, gate);
    try {
      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () -> {
                Scrape.Reply reply = Scrape.get(port, "/health");
                assertThat(reply.status()).isEqualTo(503);
                assertThat(reply.body())
                    .startsWith("not ready: applied index ")
                    .contains("entries behind leader " + leader + "'s commit index")
                    .contains("(health.max-apply-lag 5)");
              });
      assertThat(divisionOf(restarted).getInfo().getLeaderId()).hasToString(leader);

      gate.countDown();
      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(() -> assertThat(Scrape.get(port, "/health").body()).isEqualTo("ready\n"));
      long leaderCommit = divisionOf(cluster.node(leader)).getRaftLog().getLastCommittedIndex();
      assertThat(divisionOf(restarted).getInfo().getLastAppliedIndex())
          .isGreaterThanOrEqualTo(leaderCommit - 5);
    } finally {
      gate.countDown();
      restarted.close();
    }
  }

  // Guarantee: a member that lost its storage and came back the documented way (removed, started
  // with --join, added) is not ready while it has applied none of the log, saying how far behind,
  // although it knows the leader. Its applies are held back so the answer is read before it could
  // catch up.
  @Test
  void nodeOnWipedStorageIsNotReadyUntilCaughtUp() throws Exception {
    String leader = cluster.awaitLeader();
    String wiped = followersOf(leader).get(0);
    int port = cluster.metricsPort(wiped);
    writeMany(5);
    cluster.stopWipeAndRemove(wiped);

    CountDownLatch gate = new CountDownLatch(1);
    FencekeeperServer restarted = cluster.startHoldingApplies(wiped, true, gate);
    // Adding returns once the member serves, which needs the gate open: it runs meanwhile.
    CompletableFuture<Void> added = CompletableFuture.runAsync(() -> cluster.addMember(wiped));
    try {
      await()
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions() // no division until the member is added
          .untilAsserted(
              () -> {
                // The membership change may bring an election: whoever leads now.
                RaftPeerId following = divisionOf(restarted).getInfo().getLeaderId();
                assertThat(following).isNotNull();
                Scrape.Reply reply = Scrape.get(port, "/health");
                assertThat(reply.status()).isEqualTo(503);
                // A member added through Raft reports applied index 0, not -1: far behind all
                // the same.
                assertThat(reply.body())
                    .matches(
                        "not ready: applied index 0 is \\d+ entries behind leader "
                            + following
                            + "'s commit index \\d+ \\(health.max-apply-lag 5\\)\n");
              });
    } finally {
      gate.countDown();
      try {
        added.get(60, TimeUnit.SECONDS);
      } finally {
        restarted.close();
      }
    }
  }

  private void writeMany(int writes) {
    FencingClient client = cluster.newClient("health-writer");
    Lease lease = client.acquire("health", Duration.ofSeconds(30));
    for (int i = 0; i < writes; i++) {
      assertThat(
              client
                  .write(
                      "health", lease.token(), "k" + i, ("v" + i).getBytes(StandardCharsets.UTF_8))
                  .isAccepted())
          .isTrue();
    }
  }

  private RaftServer.Division divisionOf(FencekeeperServer server) throws Exception {
    return server.raftServer().getDivision(RaftConfig.groupId(cluster.config()));
  }

  // Guarantee: closing a node stops its HTTP endpoint and unregisters its JMX beans; the other
  // nodes' endpoints and beans are untouched.
  @Test
  void closingANodeStopsItsExporters() throws Exception {
    cluster.awaitLeader();
    var jmx = ManagementFactory.getPlatformMBeanServer();
    int port = cluster.metricsPort("n2");
    assertThat(Scrape.get(port, "/metrics").status()).isEqualTo(200);
    assertThat(jmx.queryNames(new ObjectName("fencekeeper.n2:*"), null)).isNotEmpty();

    cluster.stopNode("n2");

    assertThatThrownBy(() -> Scrape.get(port, "/metrics")).isInstanceOf(UncheckedIOException.class);
    assertThat(jmx.queryNames(new ObjectName("fencekeeper.n2:*"), null)).isEmpty();
    assertThat(jmx.queryNames(new ObjectName("fencekeeper.n1:*"), null)).isNotEmpty();
    assertThat(Scrape.get(cluster.metricsPort("n1"), "/metrics").status()).isEqualTo(200);

    // Restarted on the same port, the node serves again and its Ratis metrics are mirrored afresh.
    cluster.startNode("n2");
    await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(Scrape.metrics(port).keySet())
                    .anyMatch(k -> k.startsWith("ratis_state_machine_")));
  }

  // Guarantee: connections that send part of a request and stall do not silence /health. A dozen
  // are served beside a probe at once (more workers than the client library's ten); more stalled
  // sockets than there are workers are closed by the request time limit, after which the probe is
  // answered again.
  @Test
  void stalledConnectionsDoNotSilenceHealth() throws Exception {
    cluster.awaitLeader();
    int port = cluster.metricsPort("n1");
    await().atMost(Duration.ofSeconds(15)).until(() -> Scrape.get(port, "/health").status() == 200);
    for (int stalledCount : new int[] {12, MetricsHttpServer.WORKERS + 8}) {
      List<Socket> stalled = new ArrayList<>();
      try {
        for (int i = 0; i < stalledCount; i++) {
          Socket s = new Socket("127.0.0.1", port);
          s.getOutputStream()
              .write(
                  "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      .getBytes(StandardCharsets.US_ASCII));
          s.getOutputStream().flush();
          stalled.add(s);
        }
        Thread.sleep(
            500); // let the server hand each one to a worker, which then waits for the rest
        await()
            .atMost(Duration.ofSeconds(4L * MetricsHttpServer.REQUEST_TIME_LIMIT_SECONDS))
            .ignoreExceptions()
            .pollInterval(Duration.ofMillis(200))
            .untilAsserted(
                () ->
                    assertThat(Scrape.get(port, "/health").status())
                        .as("with %d stalled", stalledCount)
                        .isEqualTo(200));
      } finally {
        for (Socket s : stalled) {
          s.close();
        }
      }
    }
  }
}
