package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The verbs of the drills' and the bench's modules join the command line from its class path (this
 * module's tests see both), as the launchers make them do.
 */
class ExtraVerbsTest {
  @TempDir Path dir;

  // Guarantee: with the drills' and the bench's jars on the class path, --help lists drill and
  // bench, and both run as verbs of the one command line.
  @Test
  void drillAndBenchJoinTheCommandLine() {
    CliRun help = CliRun.run(dir, "--help");

    assertThat(help.exitCode()).isZero();
    assertThat(help.out())
        .containsPattern("(?m)^\\s+drill\\b")
        .containsPattern("(?m)^\\s+bench\\b");
    assertThat(CliRun.run(dir, "bench", "--help").out()).contains("Usage: fencekeeper bench");
    assertThat(CliRun.run(dir, "drill", "--help").out()).contains("Usage: fencekeeper drill");
  }

  // Guarantee: every help of the extra verbs renders as written (a lone '%' in a description makes
  // picocli print its raw text and a warning on stderr instead, as `bench --help` did with "5 % of
  // their CPU").
  @Test
  void everyExtraVerbsHelpRendersWithoutFormatWarnings() {
    PrintStream originalErr = System.err;
    ByteArrayOutputStream picocliWarnings = new ByteArrayOutputStream();
    List<String> rendered = new ArrayList<>();
    try {
      System.setErr(new PrintStream(picocliWarnings, true, StandardCharsets.UTF_8));
      CommandLine root =
          FencekeeperCli.commandLine(new CliContext(System.out, System.err, Map.of(), dir));
      Deque<CommandLine> verbs =
          new ArrayDeque<>(
              List.of(root.getSubcommands().get("drill"), root.getSubcommands().get("bench")));
      while (!verbs.isEmpty()) {
        CommandLine verb = verbs.pop();
        rendered.add(verb.getCommandSpec().qualifiedName());
        verb.getUsageMessage();
        verbs.addAll(verb.getSubcommands().values());
      }
    } finally {
      System.setErr(originalErr);
    }

    assertThat(rendered)
        .contains("fencekeeper drill", "fencekeeper bench", "fencekeeper bench jdbc");
    assertThat(picocliWarnings.toString(StandardCharsets.UTF_8)).isEmpty();
  }
}
