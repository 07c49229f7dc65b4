package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench's duration flags: those whose help says "0s skips it" take zero, the measured window
 * does not. Each run names an unknown workload, which the bench refuses before starting any node,
 * so that reaching that refusal shows the durations were accepted.
 */
class BenchOptionsTest {
  @TempDir Path dir;

  // Guarantee: --jit-warmup 0s and --warmup 0s are accepted (zero skips the warm-up), not refused
  // as non-positive.
  @Test
  void zeroWarmupsAreAccepted() {
    CliRun run =
        CliRun.run(dir, "bench", "--jit-warmup", "0s", "--warmup", "0s", "--workload", "W9");

    assertThat(run.exitCode()).as(run.toString()).isEqualTo(2);
    assertThat(run.err()).contains("--workload").doesNotContain("must be positive");
  }

  // Guarantee: a zero measured window is still refused, naming the option.
  @Test
  void zeroDurationIsRefused() {
    CliRun run = CliRun.run(dir, "bench", "--duration", "0s", "--workload", "W9");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("--duration").contains("'0s' must be positive");
  }

  // Guarantee: a --rate that is not a positive number of steps a second is a one-line usage
  // error before any node starts.
  @Test
  void badRateIsRefused() {
    for (String rate : new String[] {"0", "-5/s", "fast", "2000000"}) {
      CliRun run = CliRun.run(dir, "bench", "--rate", rate, "--workload", "W2");

      assertThat(run.exitCode()).as(run.toString()).isEqualTo(2);
      assertThat(run.err().strip().lines())
          .as(run.toString())
          .containsExactly(
              "fencekeeper: --rate: '"
                  + rate
                  + "' must be steps a second above 0 and at most 1000000, e.g. 500 or 500/s");
    }
  }

  // Guarantee: a negative warm-up is refused, naming the option.
  @Test
  void negativeWarmupIsRefused() {
    CliRun run = CliRun.run(dir, "bench", "--jit-warmup", "-1s", "--workload", "W9");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("--jit-warmup").contains("'-1s' must not be negative");
  }

  // Guarantee: an unknown --baseline is a one-line usage error (exit 2) before any node starts.
  @Test
  void unknownBaselineIsAOneLineUsageError() {
    CliRun run = CliRun.run(dir, "bench", "--baseline", "ratis,zookeper", "--workload", "W2");

    assertThat(run.exitCode()).as(run.toString()).isEqualTo(2);
    assertThat(run.err().strip().lines())
        .as(run.toString())
        .containsExactly(
            "fencekeeper: --baseline: 'zookeper' is not known; choose from ratis, zookeeper,"
                + " zookeeper-curator, etcd (comma-separated)");
  }

  // Guarantee: bad --snapshot-load / --snapshot-every input is a one-line usage error (exit 2)
  // before any node starts, checked before the other flags.
  @Test
  void badSnapshotLoadFlagsAreOneLineUsageErrors() {
    CliRun zero =
        CliRun.run(dir, "bench", "--snapshot-load", "--snapshot-every", "0", "--workload", "W9");
    assertThat(zero.exitCode()).as(zero.toString()).isEqualTo(2);
    assertThat(zero.err().strip().lines())
        .as(zero.toString())
        .containsExactly(
            "fencekeeper: --snapshot-every: '0' must be ≥ 1, and needs --snapshot-load");

    CliRun alone = CliRun.run(dir, "bench", "--snapshot-every", "1000", "--workload", "W9");
    assertThat(alone.exitCode()).as(alone.toString()).isEqualTo(2);
    assertThat(alone.err()).contains("needs --snapshot-load");

    CliRun external =
        CliRun.run(
            dir, "bench", "--snapshot-load", "--endpoints", "127.0.0.1:1", "--workload", "W9");
    assertThat(external.exitCode()).as(external.toString()).isEqualTo(2);
    assertThat(external.err().strip().lines())
        .as(external.toString())
        .hasSize(1)
        .first()
        .asString()
        .contains("--snapshot-load needs clusters the bench starts (not --endpoints)");
  }

  // Guarantee: a running cluster is named by its client endpoints; a Raft address there is refused
  // at once naming the client port, and the deprecated --peers still works with a warning.
  @Test
  void aRunningClusterIsNamedByItsClientEndpoints() {
    CliRun raft = CliRun.run(dir, "bench", "--endpoints", "n1@127.0.0.1:7301", "--workload", "W2");
    assertThat(raft.exitCode()).as(raft.toString()).isEqualTo(2);
    assertThat(raft.err()).as(raft.toString()).contains("--endpoints").contains("7501");

    CliRun both =
        CliRun.run(
            dir,
            "bench",
            "--endpoints",
            "127.0.0.1:1",
            "--peers",
            "127.0.0.1:2",
            "--workload",
            "W2");
    assertThat(both.exitCode()).as(both.toString()).isEqualTo(2);
    assertThat(both.err()).as(both.toString()).contains("name the cluster twice");

    CliRun deprecated =
        CliRun.run(dir, "bench", "--snapshot-load", "--peers", "127.0.0.1:1", "--workload", "W9");
    assertThat(deprecated.exitCode()).as(deprecated.toString()).isEqualTo(2);
    assertThat(deprecated.err())
        .as(deprecated.toString())
        .contains("--snapshot-load needs clusters the bench starts");
  }
}
