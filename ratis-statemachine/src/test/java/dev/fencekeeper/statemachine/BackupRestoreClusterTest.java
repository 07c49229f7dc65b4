package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Backups are consistent copies, and a restored cluster never issues a token the old one could have. */
@Timeout(180)
class BackupRestoreClusterTest {
  @TempDir Path oldData;
  @TempDir Path newData;
  @TempDir Path scratch;

  // Guarantee: restoring a backup that is older than the old cluster's last token still makes the
  // first new token exceed every token the old cluster ever issued, and the backed-up values come back.
  @Test
  void restoredClusterOutranksEveryOldToken() throws Exception {
    Path backup = scratch.resolve("cluster.backup");
    long newestOldToken;
    try (TestCluster old = TestCluster.start(oldData)) {
      old.awaitLeader();
      FencingClient client = old.newClient("old");
      Result report = client.tryAcquire("report", Duration.ofMinutes(5), "old");
      client.write("report", report.token(), List.of(KeyChange.put("2026-11-29", "backed up")), null);
      Result backedUp = client.backup(backup);
      assertThat(backedUp.code()).as(backedUp.toString()).isEqualTo(ResultCode.FOUND);
      assertThat(backedUp.currentToken()).isEqualTo(report.token());
      assertThat(Files.size(backup)).isEqualTo(backedUp.toProto().getTotalBytes());

      // The old cluster keeps going after the backup: these tokens are not in it.
      client.write("report", report.token(), List.of(KeyChange.put("2026-11-29", "after the backup")), null);
      long token = 0;
      for (int i = 0; i < 20; i++) {
        token = client.tryAcquire("later-" + i, Duration.ofMinutes(5), "old").token();
      }
      newestOldToken = token;
    }

    try (TestCluster restored = TestCluster.startRestored(newData, backup)) {
      restored.awaitLeader();
      FencingClient client = restored.newClient("new");
      assertThat(client.read("report", "2026-11-29").valueAsString()).isEqualTo("backed up");
      assertThat(client.lease("later-0").code()).isEqualTo(ResultCode.NOT_FOUND);
      Result first = client.tryAcquire("fresh", Duration.ofSeconds(30), "new");
      assertThat(first.code()).isEqualTo(ResultCode.GRANTED);
      assertThat(first.token()).isGreaterThan(newestOldToken);

      // Every replica started from the same seed and applied the same log.
      restored.snapshotAll();
      long distinct = restored.running().values().stream()
          .map(n -> n.stateMachine().read(RestartFromDiskClusterTest::render)).distinct().count();
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
      client.tryAcquire("report", Duration.ofMinutes(5), "old");
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
}
