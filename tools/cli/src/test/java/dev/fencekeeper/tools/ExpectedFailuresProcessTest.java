package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.LocalPorts;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failures a script must expect, seen as a script sees them: a real process, its exit code, and
 * everything on its stdout and stderr (where gRPC and Ratis log, which an in-process run cannot
 * capture).
 */
class ExpectedFailuresProcessTest {
  @TempDir Path dir;

  // Guarantee: a peer whose host does not resolve, or a node nobody listens on, gives one
  // UNAVAILABLE line (exit 11) that names the unresolvable host, and no stack trace anywhere.
  @Test
  void unknownHostAndUnreachableNodeAreOneLineWithoutStackTraces() throws Exception {
    try (CliProcess unknownHost =
            CliProcess.start(
                dir, "unknown-host", "read", "r", "k", "--peers", "nosuchhost.invalid:7301");
        CliProcess unreachable =
            CliProcess.start(
                dir,
                "unreachable",
                "write",
                "r",
                "k",
                "v",
                "--token",
                "1",
                "--peers",
                "127.0.0.1:" + LocalPorts.freeNodePort())) {
      int unknownHostExit = unknownHost.awaitExit(Duration.ofSeconds(120));
      int unreachableExit = unreachable.awaitExit(Duration.ofSeconds(120));

      assertThat(unknownHostExit).as(unknownHost.describe()).isEqualTo(ExitCode.UNAVAILABLE.code());
      assertThat(unknownHost.out().lines())
          .as(unknownHost.describe())
          .singleElement()
          .asString()
          .startsWith("UNAVAILABLE: ")
          .contains("cannot resolve host nosuchhost.invalid");
      assertThat(unreachableExit).as(unreachable.describe()).isEqualTo(ExitCode.UNAVAILABLE.code());
      assertThat(unreachable.out().lines())
          .as(unreachable.describe())
          .singleElement()
          .asString()
          .startsWith("UNAVAILABLE: ");
      for (CliProcess run : java.util.List.of(unknownHost, unreachable)) {
        assertThat(run.err())
            .as(run.describe())
            .doesNotContain("\tat ")
            .doesNotContain("Exception");
      }
    }
  }
}
