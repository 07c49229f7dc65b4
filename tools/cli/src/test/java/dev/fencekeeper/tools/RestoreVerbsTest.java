package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.core.FencingState;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * `backup` and `restore` through the command line, the restored cluster started on the seeded
 * directories.
 */
@Timeout(180)
class RestoreVerbsTest {
  // Guarantee: a restore revives no lease. r2 is held with a 10-minute TTL when the backup is
  // taken; the old cluster then revokes it and grants it again. On the cluster restored from that
  // backup, a write with the backed-up holder's token is refused with LEASE_EXPIRED (exit 7) saying
  // to acquire again; a new acquire gets a token of the new epoch, after which the old token is
  // STALE_TOKEN (exit 6).
  @Test
  void restoredClusterRefusesTheTokenOfALeaseLiveAtBackupTime(@TempDir Path scratch)
      throws IOException {
    Path backup = scratch.resolve("cluster.backup");
    long backedUpToken;
    try (InProcessCluster old = InProcessCluster.start(scratch.resolve("old"))) {
      backedUpToken =
          Long.parseLong(
              old.cli("lease", "acquire", "r2", "--ttl", "10m", "--owner", "a", "-q").line());
      assertThat(
              old.cli("write", "r2", "k", "v1", "--token", Long.toString(backedUpToken)).exitCode())
          .isZero();
      CliRun backedUp = old.cli("backup", backup.toString());
      assertThat(backedUp.exitCode()).as(backedUp.toString()).isZero();
      assertThat(old.cli("lease", "revoke", "r2", "--reason", "fenced out").exitCode()).isZero();
      CliRun regranted = old.cli("lease", "acquire", "r2", "--ttl", "10m", "--owner", "b", "-q");
      assertThat(regranted.exitCode()).as(regranted.toString()).isZero();
    }
    CliRun restore =
        CliRun.run(
            scratch, "restore", backup.toString(), "--data-dir", scratch.resolve("new").toString());
    assertThat(restore.exitCode()).as(restore.toString()).isZero();

    try (InProcessCluster restored = InProcessCluster.start(scratch.resolve("new"))) {
      CliRun revived =
          restored.cli("write", "r2", "k", "v2", "--token", Long.toString(backedUpToken));
      assertThat(revived.exitCode())
          .as(revived.toString())
          .isEqualTo(ExitCode.LEASE_EXPIRED.code());
      assertThat(revived.out() + revived.err())
          .contains("LEASE_EXPIRED")
          .contains("acquire 'r2' again");
      assertThat(restored.cli("read", "r2", "k").out()).contains("v1");

      CliRun reacquired =
          restored.cli("lease", "acquire", "r2", "--ttl", "30s", "--owner", "a", "-q");
      assertThat(reacquired.exitCode()).as(reacquired.toString()).isZero();
      long newToken = Long.parseLong(reacquired.line());
      assertThat(newToken).isGreaterThanOrEqualTo(1L << FencingState.TOKEN_EPOCH_BITS);
      CliRun stale =
          restored.cli("write", "r2", "k", "v3", "--token", Long.toString(backedUpToken));
      assertThat(stale.exitCode()).as(stale.toString()).isEqualTo(ExitCode.STALE_TOKEN.code());
      CliRun fresh = restored.cli("write", "r2", "k", "v4", "--token", Long.toString(newToken));
      assertThat(fresh.exitCode()).as(fresh.toString()).isZero();
    }
  }
}
