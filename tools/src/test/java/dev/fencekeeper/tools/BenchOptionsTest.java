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
            "fencekeeper: --baseline: 'zookeper' is"
                + " not known; choose from ratis, zookeeper, etcd (comma-separated)");
  }
}
