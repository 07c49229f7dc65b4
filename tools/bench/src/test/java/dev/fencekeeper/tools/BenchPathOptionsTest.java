package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The flags of the client paths, the many-leases run and the Node comparison: bad input is a
 * one-line usage error (exit 2) before any node starts. Each run names a real workload, so that
 * only the flag under test can stop the bench, and --clients 0, which the bench refuses after these
 * flags: were the check under test missing, the run would end there rather than start a cluster.
 */
class BenchPathOptionsTest {
  @TempDir Path dir;

  // Guarantee: --api takes only lease and raw, each once, and says which are known.
  @Test
  void unknownOrRepeatedApiIsAOneLineUsageError() {
    CliRun unknown =
        CliRun.run(dir, "bench", "--api", "lease,token", "--workload", "W2", "--clients", "0");
    assertThat(unknown.exitCode()).as(unknown.toString()).isEqualTo(2);
    assertThat(unknown.err().strip().lines())
        .as(unknown.toString())
        .hasSize(1)
        .first()
        .asString()
        .contains("--api: 'token' is not known; choose lease, raw");

    CliRun twice =
        CliRun.run(dir, "bench", "--api", "raw,raw", "--workload", "W2", "--clients", "0");
    assertThat(twice.exitCode()).as(twice.toString()).isEqualTo(2);
    assertThat(twice.err()).contains("--api: 'raw' is named twice");
  }

  // Guarantee: a negative or absurd --many-leases is refused, naming the flag.
  @Test
  void manyLeasesOutOfRangeIsRefused() {
    CliRun negative =
        CliRun.run(dir, "bench", "--many-leases", "-1", "--workload", "W2", "--clients", "0");
    assertThat(negative.exitCode()).as(negative.toString()).isEqualTo(2);
    assertThat(negative.err()).contains("--many-leases: '-1' must be 0 (skipped) to 1000000");

    CliRun huge =
        CliRun.run(dir, "bench", "--many-leases", "1000001", "--workload", "W2", "--clients", "0");
    assertThat(huge.exitCode()).as(huge.toString()).isEqualTo(2);
    assertThat(huge.err()).contains("--many-leases");
  }

  // Guarantee: --node-w2 refuses, before any cluster starts, a directory without the Node bench
  // script or without the built client, saying what to do; --node-client alone is refused.
  @Test
  void nodeW2NeedsTheScriptAndTheBuiltClient() throws Exception {
    CliRun noScript =
        CliRun.run(
            dir,
            "bench",
            "--node-w2",
            "--node-client",
            dir.toString(),
            "--workload",
            "W2",
            "--clients",
            "0");
    assertThat(noScript.exitCode()).as(noScript.toString()).isEqualTo(2);
    assertThat(noScript.err()).contains("--node-w2: no Node bench script at");

    Files.createDirectories(dir.resolve("bench"));
    Files.writeString(dir.resolve("bench/w2.mjs"), "");
    CliRun notBuilt =
        CliRun.run(
            dir,
            "bench",
            "--node-w2",
            "--node-client",
            dir.toString(),
            "--workload",
            "W2",
            "--clients",
            "0");
    assertThat(notBuilt.exitCode()).as(notBuilt.toString()).isEqualTo(2);
    assertThat(notBuilt.err())
        .contains("the Node client is not built")
        .contains("npm ci && npm run build");

    CliRun alone =
        CliRun.run(
            dir, "bench", "--node-client", dir.toString(), "--workload", "W2", "--clients", "0");
    assertThat(alone.exitCode()).as(alone.toString()).isEqualTo(2);
    assertThat(alone.err()).contains("--node-client needs --node-w2");
  }
}
