package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The verbs for waiting, idempotent acquire, revoke and watch, against three in-process nodes. */
@Timeout(120)
class LeaseSemanticsVerbsTest {
  @RegisterExtension static final InProcessCluster cluster = InProcessCluster.perClass();

  private static CliRun cli(String... args) {
    return cluster.cli(args);
  }

  // Guarantee: `lease acquire --wait` blocks until the holder's lease ends, then prints the new
  // grant.
  @Test
  void acquireWithWaitGetsTheResourceWhenTheHolderLetsGo() throws Exception {
    CliRun first = cli("lease", "acquire", "waited", "--ttl", "1s", "--owner", "a", "-q");
    assertThat(first.exitCode()).as(first.toString()).isZero();
    CliRun second =
        cli("lease", "acquire", "waited", "--ttl", "5s", "--owner", "b", "--wait", "10s");
    assertThat(second.exitCode()).as(second.toString()).isZero();
    assertThat(second.line()).startsWith("GRANTED waited token=").contains("(owner b)");
    long secondToken = Long.parseLong(second.line().replaceAll(".*token=(\\d+).*", "$1"));
    assertThat(secondToken).isGreaterThan(Long.parseLong(first.line()));
  }

  // Guarantee: a wait that ends before the resource frees up exits 3 (HELD) and leaves the line.
  @Test
  void waitThatRunsOutExitsHeld() {
    cli("lease", "acquire", "busy", "--ttl", "30s", "--owner", "a", "-q");
    CliRun waited =
        cli("lease", "acquire", "busy", "--ttl", "5s", "--owner", "b", "--wait", "500ms");
    assertThat(waited.exitCode()).as(waited.toString()).isEqualTo(3);
    assertThat(waited.line()).startsWith("HELD");
  }

  // Guarantee: retrying an acquire with the same --request-id prints the same token, not a second
  // lease.
  @Test
  void acquireWithRequestIdIsIdempotent() {
    CliRun first = cli("lease", "acquire", "idem", "--ttl", "30s", "--request-id", "job-7", "-q");
    CliRun retry = cli("lease", "acquire", "idem", "--ttl", "30s", "--request-id", "job-7", "-q");
    assertThat(retry.exitCode()).as(retry.toString()).isZero();
    assertThat(retry.line()).isEqualTo(first.line());
    CliRun other = cli("lease", "acquire", "idem", "--ttl", "30s", "--request-id", "job-8");
    assertThat(other.exitCode()).isEqualTo(3);
  }

  // Guarantee: `lease revoke` evicts the holder (exit 0), whose write is then rejected, and a
  // lock-delay asked for at acquire holds the resource afterwards (exit 16).
  @Test
  void revokeEvictsAndStartsTheLockDelay() {
    CliRun grant = cli("lease", "acquire", "stuck", "--ttl", "30s", "--lock-delay", "30s", "-q");
    long token = Long.parseLong(grant.line());
    CliRun revoke = cli("lease", "revoke", "stuck", "--reason", "holder wedged");
    assertThat(revoke.exitCode()).as(revoke.toString()).isZero();
    assertThat(revoke.line()).startsWith("REVOKED");
    CliRun write = cli("write", "stuck", "k", "v", "--token", Long.toString(token));
    assertThat(write.exitCode()).as(write.toString()).isEqualTo(7);
    CliRun again = cli("lease", "acquire", "stuck", "--ttl", "5s");
    assertThat(again.exitCode()).as(again.toString()).isEqualTo(16);
  }

  // Guarantee: `backup` writes a file that `restore` accepts for new nodes, and `restore` refuses a
  // node that already holds Raft data (exit 2).
  @Test
  void backupThenRestoreSeedsNewNodesOnly(@TempDir Path scratch) {
    cli("lease", "acquire", "backed-up", "--ttl", "30s", "-q");
    Path file = scratch.resolve("cluster.backup");
    CliRun backup = cli("backup", file.toString());
    assertThat(backup.exitCode()).as(backup.toString()).isZero();
    assertThat(backup.line()).matches("BACKUP .*: \\d+ bytes, \\d+ resources, newest token \\d+");

    CliRun restore =
        CliRun.run(
            scratch, "restore", file.toString(), "--data-dir", scratch.resolve("new").toString());
    assertThat(restore.exitCode()).as(restore.toString()).isZero();
    assertThat(scratch.resolve("new/n2/fencekeeper-restore.seed")).exists();

    CliRun refused =
        CliRun.run(scratch, "restore", file.toString(), "--data-dir", cluster.dataDir().toString());
    assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(2);
    assertThat(refused.err()).contains("already holds Raft data");
  }

  // Guarantee: `watch --count` prints the events of a resource in commit order, each with its
  // index.
  @Test
  void watchPrintsEventsInOrder() throws Exception {
    CompletableFuture<CliRun> watching =
        CompletableFuture.supplyAsync(
            () -> cli("watch", "watched", "--count", "2", "--timeout", "30s"));
    Thread.sleep(1_000); // the watch starts from now
    long token = Long.parseLong(cli("lease", "acquire", "watched", "--ttl", "30s", "-q").line());
    cli("lease", "release", "watched", Long.toString(token));
    CliRun run = watching.get(40, TimeUnit.SECONDS);
    assertThat(run.exitCode()).as(run.toString()).isZero();
    assertThat(run.out().strip().split("\n"))
        .satisfiesExactly(
            l -> assertThat(l).matches("\\d+\\.0 ACQUIRED watched token=" + token + ".*"),
            l -> assertThat(l).matches("\\d+\\.0 RELEASED watched token=" + token + ".*"));
  }
}
