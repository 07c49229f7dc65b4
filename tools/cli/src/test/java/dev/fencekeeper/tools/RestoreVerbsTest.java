package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.core.FencingState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
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
  // backup, a write with the backed-up holder's token is refused with LEASE_EXPIRED (exit 7)
  // saying to acquire again, and one with the token granted after the backup with UNKNOWN_TOKEN
  // (exit 8: this cluster never issued it); a new acquire gets a token of the new epoch, after
  // which both old tokens are STALE_TOKEN (exit 6).
  @Test
  void restoredClusterRefusesTheTokenOfALeaseLiveAtBackupTime(@TempDir Path scratch)
      throws IOException {
    Path backup = scratch.resolve("cluster.backup");
    long backedUpToken;
    long afterBackupToken;
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
      afterBackupToken = Long.parseLong(regranted.line());
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
      // A token the old cluster issued after the backup was never issued here.
      CliRun unknown =
          restored.cli("write", "r2", "k", "v2", "--token", Long.toString(afterBackupToken));
      assertThat(unknown.exitCode())
          .as(unknown.toString())
          .isEqualTo(ExitCode.UNKNOWN_TOKEN.code());

      CliRun reacquired =
          restored.cli("lease", "acquire", "r2", "--ttl", "30s", "--owner", "a", "-q");
      assertThat(reacquired.exitCode()).as(reacquired.toString()).isZero();
      long newToken = Long.parseLong(reacquired.line());
      assertThat(newToken).isGreaterThanOrEqualTo(1L << FencingState.TOKEN_EPOCH_BITS);
      for (long old : new long[] {backedUpToken, afterBackupToken}) {
        CliRun stale = restored.cli("write", "r2", "k", "v3", "--token", Long.toString(old));
        assertThat(stale.exitCode()).as(stale.toString()).isEqualTo(ExitCode.STALE_TOKEN.code());
      }
      CliRun fresh = restored.cli("write", "r2", "k", "v4", "--token", Long.toString(newToken));
      assertThat(fresh.exitCode()).as(fresh.toString()).isZero();
    }
  }

  // Guarantee: what holds every protected value is its user's alone: the backup file, each seeded
  // node's storage.dir and seed, and a snapshot are 0600 files in 0700 directories, and another
  // local user (checked as nobody, where the test runs as root) cannot read them.
  @Test
  void backupsSeedsAndSnapshotsArePrivate(@TempDir Path scratch) throws Exception {
    Files.setPosixFilePermissions(scratch, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path backup = scratch.resolve("private.backup");
    try (InProcessCluster cluster = InProcessCluster.start(scratch.resolve("cluster"))) {
      String token = cluster.cli("lease", "acquire", "r", "--ttl", "1m", "-q").line();
      assertThat(cluster.cli("write", "r", "k", "secret", "--token", token).exitCode()).isZero();
      assertThat(cluster.cli("backup", backup.toString()).exitCode()).isZero();
      assertThat(cluster.cli("snapshot", "create", "--all").exitCode()).isZero();
      Path snapshot;
      try (Stream<Path> files = Files.walk(scratch.resolve("cluster"))) {
        snapshot =
            files
                .filter(p -> p.getFileName().toString().startsWith("snapshot."))
                .filter(p -> !p.toString().endsWith(".md5"))
                .findFirst()
                .orElseThrow();
      }
      assertPrivate(snapshot, scratch);
    }
    assertPrivate(backup, scratch);
    CliRun restore =
        CliRun.run(
            scratch, "restore", backup.toString(), "--data-dir", scratch.resolve("new").toString());
    assertThat(restore.exitCode()).as(restore.toString()).isZero();
    try (Stream<Path> files = Files.walk(scratch.resolve("new"))) {
      for (Path p :
          files
              .filter(Files::isRegularFile)
              .filter(p -> !p.toString().endsWith(".properties"))
              .toList()) {
        assertPrivate(p, scratch);
      }
    }
  }

  /** {@code file} is 0600 inside 0700 directories up to {@code root}, and nobody cannot read it. */
  private static void assertPrivate(Path file, Path root) throws Exception {
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .as("%s", file)
        .isEqualTo("rw-------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent())))
        .as("%s", file.getParent())
        .isIn("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(root)));
    if (ServiceUsers.canSwitchUser()) {
      // Even with every directory open, the file's own mode keeps another user out.
      for (Path d = file.getParent(); d.startsWith(root); d = d.getParent()) {
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x"));
      }
      assertThat(ServiceUsers.canRead("nobody", file)).as("nobody reads %s", file).isFalse();
    }
  }
}
