package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A full-cluster stop and restart recovers from snapshot plus log tail. */
@Timeout(180)
class RestartFromDiskClusterTest {
  @TempDir Path dataDir;

  // Guarantee: after every node is stopped and restarted from disk (a snapshot taken before, more
  // entries after it), each node's state is identical to before and the next token exceeds all
  // earlier.
  @Test
  void fullRestartRecoversIdenticalStateAndTheTokenSequence() {
    long lastTokenBefore;
    Map<String, String> before = new HashMap<>();
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      FencingClient client = cluster.newClient("worker");
      long token = 0;
      for (int i = 0; i < 20; i++) {
        Result grant = client.acquireToken("report-" + (i % 4), Duration.ofSeconds(30), "worker");
        assertThat(grant.code()).isEqualTo(ResultCode.GRANTED);
        token = grant.token();
        client.write(
            "report-" + (i % 4), token, List.of(KeyChange.put("v", "value-" + i)), "req-" + i);
        if (i < 16) {
          client.release("report-" + (i % 4), token); // the last four stay held across the restart
        }
        if (i == 10) {
          cluster.snapshotAll(); // the remaining entries live only in the log tail
        }
      }
      Result held = client.acquireToken("held-across-restart", Duration.ofMinutes(5), "survivor");
      lastTokenBefore = held.token();
      assertThat(lastTokenBefore).isGreaterThan(token);
      awaitReplicasEqual(cluster);
      cluster
          .running()
          .forEach(
              (id, node) ->
                  before.put(id, node.stateMachine().read(RestartFromDiskClusterTest::render)));
      cluster.stopAll();

      for (String id : List.of("n1", "n2", "n3")) {
        cluster.startNode(id);
      }
      cluster.awaitLeader();
      // Every lease, value, receipt and the token sequence come back; only time and term move on
      // (the new leader's takeover entry cannot extend these long leases, so it changes nothing
      // else).
      for (String id : List.of("n1", "n2", "n3")) {
        await()
            .atMost(Duration.ofSeconds(30))
            .untilAsserted(
                () ->
                    assertThat(
                            cluster
                                .node(id)
                                .stateMachine()
                                .read(RestartFromDiskClusterTest::render))
                        .as(id)
                        .isEqualTo(before.get(id)));
      }

      FencingClient after = cluster.newClient("after-restart");
      assertThat(after.read("report-3", "v").valueAsString()).isEqualTo("value-19");
      Result lease = after.lease("held-across-restart");
      assertThat(lease.live()).isTrue();
      assertThat(lease.token()).isEqualTo(lastTokenBefore);
      Result next = after.acquireToken("new-resource", Duration.ofSeconds(5), "after");
      assertThat(next.code()).isEqualTo(ResultCode.GRANTED);
      assertThat(next.token()).isGreaterThan(lastTokenBefore);
    }
  }

  /**
   * The state minus clock and term, as text: equal renderings mean equal leases, values and tokens.
   */
  static String render(FencingState state) {
    StringBuilder s =
        new StringBuilder("lastIssuedToken=").append(state.lastIssuedToken()).append('\n');
    state.image().resources().forEach(r -> s.append(SnapshotStore.toProto(r)).append('\n'));
    return s.toString();
  }

  private static void awaitReplicasEqual(TestCluster cluster) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                cluster.running().values().stream()
                        .map(n -> n.stateMachine().digest())
                        .distinct()
                        .count()
                    == 1);
  }
}
