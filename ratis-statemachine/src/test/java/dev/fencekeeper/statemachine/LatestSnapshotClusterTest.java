package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The state machine remembers that it has no snapshot, and forgets that as soon as it has one. */
@Timeout(120)
class LatestSnapshotClusterTest {
  @TempDir Path dataDir;

  // Guarantee: a node that answered "no snapshot" on every append so far reports the snapshot it
  // takes next (Ratis relies on it to install snapshots on lagging followers and to purge its log),
  // and so does a node restarted over that snapshot.
  @Test
  void aSnapshotTakenAfterManyAppendsIsReportedAtOnce() {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      FencingClient client = cluster.newClient("worker");
      for (int i = 0; i < 10; i++) {
        Result grant = client.acquireToken("job-" + i, Duration.ofSeconds(30), "worker");
        assertThat(grant.code()).isEqualTo(ResultCode.GRANTED);
      }
      cluster
          .running()
          .forEach(
              (id, node) -> assertThat(node.stateMachine().getLatestSnapshot()).as(id).isNull());

      Map<String, Long> taken = cluster.snapshotAll();
      cluster
          .running()
          .forEach(
              (id, node) -> {
                SnapshotInfo latest = node.stateMachine().getLatestSnapshot();
                assertThat(latest).as(id).isNotNull();
                // Not the applied index: the leader's own entries (takeover, ticks) may land
                // between the snapshot and here.
                assertThat(latest.getIndex()).as(id).isEqualTo(taken.get(id));
              });

      long snapshotIndex = cluster.node("n2").stateMachine().getLatestSnapshot().getIndex();
      cluster.stopNode("n2");
      cluster.startNode("n2");
      assertThat(cluster.node("n2").stateMachine().getLatestSnapshot().getIndex())
          .isEqualTo(snapshotIndex);
    }
  }
}
