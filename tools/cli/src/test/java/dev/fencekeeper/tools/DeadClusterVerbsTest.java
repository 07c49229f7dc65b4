package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.LocalPorts;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Client verbs when no node of the cluster can be reached at all. */
@Timeout(60)
class DeadClusterVerbsTest {
  @TempDir Path dir;

  // Guarantee: a client verb against dead ports exits 11 (UNAVAILABLE) within a few seconds, with
  // one line that says so and no stack trace.
  @Test
  void verbAgainstDeadPortsFailsFastWithOneLine() {
    String nowhere =
        "127.0.0.1:"
            + LocalPorts.freeNodePort()
            + ",127.0.0.1:"
            + LocalPorts.freeNodePort()
            + ",127.0.0.1:"
            + LocalPorts.freeNodePort();
    long start = System.nanoTime();
    CliRun run =
        CliRun.run(dir, "lease", "acquire", "nowhere", "--ttl", "5s", "--endpoints", nowhere);
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(run.exitCode()).as(run.toString()).isEqualTo(ExitCode.UNAVAILABLE.code());
    assertThat(took).as(run.toString()).isLessThan(Duration.ofSeconds(8));
    String all = (run.out() + run.err()).strip();
    assertThat(all.lines().count()).as(run.toString()).isEqualTo(1);
    assertThat(all)
        .startsWith("UNAVAILABLE")
        .contains("no node reachable")
        .doesNotContain("Exception");
  }
}
