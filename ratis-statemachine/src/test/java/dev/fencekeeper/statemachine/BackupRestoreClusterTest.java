package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.ReplicaDivergedException;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.RaftConfig;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backups are consistent copies, and a restored cluster never issues a token the old one could
 * have.
 */
@Timeout(180)
class BackupRestoreClusterTest {
  @TempDir Path oldData;
  @TempDir Path newData;
  @TempDir Path scratch;

  // Guarantee: restoring a backup that is older than the old cluster's last token still makes the
  // first new token exceed every token the old cluster ever issued, and the backed-up values come
  // back.
  @Test
  void restoredClusterOutranksEveryOldToken() throws Exception {
    Path backup = scratch.resolve("cluster.backup");
    long newestOldToken;
    try (TestCluster old = TestCluster.start(oldData)) {
      old.awaitLeader();
      FencingClient client = old.newClient("old");
      Result report = client.acquireToken("report", Duration.ofMinutes(5), "old");
      client.write(
          "report", report.token(), List.of(KeyChange.put("2026-11-29", "backed up")), null);
      Result backedUp = client.backup(backup);
      assertThat(backedUp.code()).as(backedUp.toString()).isEqualTo(ResultCode.FOUND);
      assertThat(backedUp.currentToken()).isEqualTo(report.token());
      assertThat(Files.size(backup)).isEqualTo(Wire.response(backedUp).getTotalBytes());

      // The old cluster keeps going after the backup: these tokens are not in it.
      client.write(
          "report", report.token(), List.of(KeyChange.put("2026-11-29", "after the backup")), null);
      long token = 0;
      for (int i = 0; i < 20; i++) {
        token = client.acquireToken("later-" + i, Duration.ofMinutes(5), "old").token();
      }
      newestOldToken = token;
    }

    try (TestCluster restored = TestCluster.startRestored(newData, backup)) {
      restored.awaitLeader();
      FencingClient client = restored.newClient("new");
      assertThat(client.read("report", "2026-11-29").valueAsString()).isEqualTo("backed up");
      assertThat(client.lease("later-0").code()).isEqualTo(ResultCode.NOT_FOUND);
      Result first = client.acquireToken("fresh", Duration.ofSeconds(30), "new");
      assertThat(first.code()).isEqualTo(ResultCode.GRANTED);
      assertThat(first.token()).isGreaterThan(newestOldToken);

      // Every replica started from the same seed and applied the same log. Followers learn the
      // commit index from the leader's next append or heartbeat, so compare once all have applied
      // the same entries.
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  restored.running().keySet().stream().map(restored::lastApplied).distinct().count()
                      == 1);
      restored.snapshotAll();
      long distinct =
          restored.running().values().stream()
              .map(n -> n.stateMachine().read(RestartFromDiskClusterTest::render))
              .distinct()
              .count();
      assertThat(distinct).isEqualTo(1);
    }
  }

  // Guarantee: a backup cannot be seeded into a node that already has Raft data (its replicas would
  // disagree), nor can a damaged backup be seeded at all.
  @Test
  void seedingRefusesExistingNodesAndDamagedFiles() throws Exception {
    Path backup = scratch.resolve("cluster.backup");
    try (TestCluster old = TestCluster.start(oldData)) {
      old.awaitLeader();
      FencingClient client = old.newClient("old");
      client.acquireToken("report", Duration.ofMinutes(5), "old");
      client.backup(backup);
    }
    assertThatThrownBy(() -> RestoreSeed.seed(backup, oldData.resolve("n1"), Limits.defaults()))
        .hasMessageContaining("already holds Raft data");
    Path damaged = scratch.resolve("damaged.backup");
    byte[] bytes = Files.readAllBytes(backup);
    Files.write(damaged, java.util.Arrays.copyOf(bytes, bytes.length - 3));
    assertThatThrownBy(() -> RestoreSeed.seed(damaged, newData.resolve("n1"), Limits.defaults()))
        .isInstanceOf(java.io.IOException.class);
    assertThat(newData.resolve("n1").resolve("fencekeeper-restore.seed")).doesNotExist();
  }

  // Guarantee: a member added to a restored cluster without the seed stops at the first takeover
  // entry of the log instead of replaying it onto an empty state (where it would diverge and could,
  // as leader, issue tokens below ones already issued); seeded from the same backup, a member joins
  // and agrees.
  @Test
  void unseededJoinerStopsAndSeededJoinerAgrees() throws Exception {
    Path backup = scratch.resolve("cluster.backup");
    try (TestCluster old = TestCluster.start(oldData)) {
      old.awaitLeader();
      FencingClient client = old.newClient("old");
      client.acquireToken("report", Duration.ofMinutes(5), "old");
      client.backup(backup);
    }

    try (TestCluster restored = TestCluster.startRestored(newData, backup);
        FencingAdmin admin = FencingAdmin.connect(restored.config())) {
      String first = restored.awaitLeader();
      // The leader proposes its takeover entry only once it is ready, and takes client commands
      // from
      // then on: a command may precede the takeover in the log, and a joiner applies it before it
      // reaches the takeover and stops. What this test checks starts at the takeover.
      long term =
          restored
              .node(first)
              .raftServer()
              .getDivision(RaftConfig.groupId(restored.config()))
              .getInfo()
              .getCurrentTerm();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> restored.node(first).stateMachine().leaderAnnouncement().term() == term);
      FencingClient client = restored.newClient("new");
      long issued = client.acquireToken("fresh", Duration.ofMinutes(5), "new").token();

      PeerAddress unseededPeer = new PeerAddress("n4", "127.0.0.1", LocalPorts.freeNodePort());
      try (FencekeeperServer unseeded =
          FencekeeperServer.join(joinerConfig(restored, unseededPeer))) {
        // The add may fail (the joiner never catches up) or commit a member that is down; either
        // way it ends.
        CompletableFuture<Void> add =
            CompletableFuture.runAsync(() -> admin.addMember(unseededPeer));
        ReplicaDivergedException stopped =
            unseeded.stateMachine().diverged().get(60, TimeUnit.SECONDS);
        assertThat(stopped).hasMessageContaining("restore");
        assertThat(unseeded.stateMachine().read(FencingState::resources))
            .as("commands applied")
            .isEmpty();
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    !unseeded
                        .raftServer()
                        .getDivision(RaftConfig.groupId(restored.config()))
                        .getInfo()
                        .isAlive());
        try {
          add.get(120, TimeUnit.SECONDS);
        } catch (ExecutionException refused) {
          // Refused because the joiner did not catch up: fine, nothing to undo.
        }
      }
      if (admin.membership().member("n4").isPresent()) {
        admin.removeMember("n4");
      }

      // The cluster kept its token sequence.
      Result next = client.acquireToken("after-the-failed-join", Duration.ofMinutes(5), "new");
      assertThat(next.code()).isEqualTo(ResultCode.GRANTED);
      assertThat(next.token()).isGreaterThan(issued);

      PeerAddress seededPeer = new PeerAddress("n5", "127.0.0.1", LocalPorts.freeNodePort());
      ClusterConfig seededConfig = joinerConfig(restored, seededPeer);
      RestoreSeed.seed(backup, seededConfig.storageDir(), Limits.defaults());
      try (FencekeeperServer seeded = FencekeeperServer.join(seededConfig)) {
        admin.addMember(seededPeer);
        long newest =
            client.acquireToken("after-the-seeded-join", Duration.ofMinutes(5), "new").token();
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> seeded.stateMachine().read(FencingState::lastIssuedToken) == newest);
        FencingStateMachine leader = restored.node(restored.awaitLeader()).stateMachine();
        assertThat(seeded.stateMachine().read(RestartFromDiskClusterTest::render))
            .isEqualTo(leader.read(RestartFromDiskClusterTest::render));
        assertThat(seeded.stateMachine().diverged()).isNotDone();
        admin.removeMember("n5");
      }
    }
  }

  /** A new member of {@code cluster} at {@code joiner}, with its storage under the scratch dir. */
  private ClusterConfig joinerConfig(TestCluster cluster, PeerAddress joiner) {
    List<PeerAddress> peers = new ArrayList<>(cluster.config().peers());
    peers.add(joiner);
    Properties p = cluster.config().toProperties();
    p.setProperty(
        "peers", peers.stream().map(PeerAddress::toString).collect(Collectors.joining(",")));
    p.setProperty("node.id", joiner.id());
    p.setProperty("storage.dir", scratch.resolve(joiner.id()).toString());
    return ClusterConfig.fromProperties(p);
  }
}
