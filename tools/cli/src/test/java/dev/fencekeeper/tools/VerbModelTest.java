package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VerbModelTest {
  @TempDir Path dir;

  // Guarantee: a command line that names a built-in verb builds that verb's model alone (the start
  // of a client verb pays for no other); without one, every verb is there.
  @Test
  void aNamedVerbIsBuiltAlone() {
    assertThat(verbs("lease", "show", "r")).containsExactly("lease");
    assertThat(verbs("leases", "--json")).containsExactly("leases");
    assertThat(verbs()).contains("server", "up", "lease", "write", "read", "status", "completion");
    assertThat(verbs("--help")).hasSameElementsAs(verbs());
    assertThat(verbs("completion", "bash")).hasSameElementsAs(verbs());
    assertThat(verbs("lesae", "show")).hasSameElementsAs(verbs());
    assertThat(verbs("--version")).isEmpty();
    assertThat(verbs("--version", "lease")).hasSameElementsAs(verbs());
  }

  // Guarantee: a verb built alone answers as in the whole model: the same help, the same usage
  // errors and suggestions, the same exit codes.
  @Test
  void aVerbBuiltAloneAnswersAsInTheWholeModel() {
    List<String[]> commands =
        List.of(
            new String[] {"lease", "--help"},
            new String[] {"lease", "show", "--help"},
            new String[] {"lease", "show"},
            new String[] {"lease"},
            new String[] {"lease", "shw", "r"},
            new String[] {"lease", "acquire", "r", "--tll", "5s"},
            new String[] {"write", "--bogus"},
            new String[] {"read", "r", "k", "--timeout", "soon"},
            new String[] {"status", "--help"},
            new String[] {"leases", "--help"},
            new String[] {"members", "add"},
            new String[] {"certs", "--help"},
            new String[] {"server", "--help"},
            new String[] {"up", "--help"},
            new String[] {"lesae", "show", "r"},
            new String[] {"--version"},
            new String[] {"-V"},
            new String[] {"--version", "lease"});
    for (String[] args : commands) {
      assertThat(run(true, args)).as(String.join(" ", args)).isEqualTo(run(false, args));
    }
  }

  private List<String> verbs(String... args) {
    CliContext context = new CliContext(System.out, System.err, Map.of(), dir);
    return List.copyOf(FencekeeperCli.commandLine(context, args).getSubcommands().keySet());
  }

  /**
   * Exit code, stdout and stderr of {@code args}, parsed by the model for them or the whole one.
   */
  private List<String> run(boolean whole, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CliContext context =
        new CliContext(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            Map.of(),
            dir);
    int exit =
        whole
            ? FencekeeperCli.commandLine(context).execute(args)
            : FencekeeperCli.execute(context, args);
    return List.of(
        String.valueOf(exit),
        out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }
}
