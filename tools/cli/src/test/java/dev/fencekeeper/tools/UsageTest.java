package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.LocalPorts;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
 * Mistakes on the command line: refused before anything is sent, with exit 2 and a message naming
 * the mistake.
 */
class UsageTest {
  @TempDir Path dir;

  // Guarantee: --help explains the verbs and prints the exit-code table, and exits 0.
  @Test
  void helpListsVerbsAndExitCodes() {
    CliRun run = CliRun.run(dir, "--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("server", "up", "lease", "write", "read", "status", "Exit codes:");
    assertThat(run.out())
        .contains("members", "leader", "snapshot", "leases", "keys", "inspect", "metrics");
    for (ExitCode code : ExitCode.values()) {
      assertThat(run.out()).contains(String.format("%2d  %s", code.code(), code.meaning()));
    }
  }

  // Guarantee: every verb's help renders as written. A lone '%' in a description makes picocli
  // print its raw text and a warning on stderr instead (as `bench --help` did with "5 % of their
  // CPU").
  @Test
  void everyVerbsHelpRendersWithoutFormatWarnings() {
    PrintStream originalErr = System.err;
    ByteArrayOutputStream picocliWarnings = new ByteArrayOutputStream();
    List<String> rendered = new ArrayList<>();
    try {
      System.setErr(new PrintStream(picocliWarnings, true, StandardCharsets.UTF_8));
      Deque<CommandLine> verbs =
          new ArrayDeque<>(
              List.of(
                  FencekeeperCli.commandLine(
                      new CliContext(System.out, System.err, Map.of(), dir))));
      while (!verbs.isEmpty()) {
        CommandLine verb = verbs.pop();
        rendered.add(verb.getCommandSpec().qualifiedName());
        verb.getUsageMessage();
        verbs.addAll(verb.getSubcommands().values());
      }
    } finally {
      System.setErr(originalErr);
    }

    assertThat(rendered).contains("fencekeeper lease acquire");
    assertThat(picocliWarnings.toString(StandardCharsets.UTF_8)).isEmpty();
  }

  // Guarantee: --version names this build and the Ratis it embeds.
  @Test
  void versionNamesTheBuild() {
    CliRun run = CliRun.run(dir, "--version");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).containsPattern("fencekeeper \\d+\\.\\d+").contains("Apache Ratis 3.");
  }

  // Guarantee: no verb, an unknown verb, or a bare group is a usage error (2), never a silent
  // success.
  @Test
  void missingOrUnknownVerbsAreUsageErrors() {
    assertThat(CliRun.run(dir).exitCode()).isEqualTo(2);
    assertThat(CliRun.run(dir, "frobnicate").exitCode()).isEqualTo(2);
    assertThat(CliRun.run(dir, "lease").exitCode()).isEqualTo(2);
    for (String group : List.of("members", "leader", "snapshot", "leases", "keys")) {
      assertThat(CliRun.run(dir, group).exitCode()).as(group).isEqualTo(2);
    }
  }

  // Guarantee: a TTL without a unit is refused (the factor-of-1000 mistake), naming the option and
  // the value.
  @Test
  void ttlWithoutUnitIsRefused() {
    CliRun run = CliRun.run(dir, "lease", "acquire", "r", "--ttl", "5");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("--ttl").contains("'5' is not a duration");
  }

  // Guarantee: write needs a token and exactly one of a value or --delete.
  @Test
  void writeArgumentsAreChecked() {
    assertThat(CliRun.run(dir, "write", "r", "k", "v").err()).contains("--token");
    CliRun both = CliRun.run(dir, "write", "r", "k", "v", "--delete", "--token", "1");
    CliRun neither = CliRun.run(dir, "write", "r", "k", "--token", "1");

    CliRun valueAndFile =
        CliRun.run(dir, "write", "r", "k", "v", "--value-file", "f", "--token", "1");

    assertThat(both.exitCode()).isEqualTo(2);
    assertThat(both.err()).contains("one of <value>, --value-file or --delete");
    assertThat(valueAndFile.exitCode()).isEqualTo(2);
    assertThat(valueAndFile.err()).contains("one of <value>, --value-file or --delete");
    assertThat(neither.exitCode()).isEqualTo(2);
    assertThat(neither.err()).contains("missing <value>");
  }

  // Guarantee: a usage error prints the mistake in one line and where to read more, not the whole
  // help.
  @Test
  void usageErrorIsOneLineAndAHint() {
    CliRun typo = CliRun.run(dir, "lease", "acquire", "r", "--tll", "5s");
    CliRun unknownVerb = CliRun.run(dir, "leese");

    assertThat(typo.exitCode()).isEqualTo(2);
    assertThat(typo.err().lines())
        .as(typo.toString())
        .hasSizeLessThanOrEqualTo(3)
        .first()
        .asString()
        .startsWith("fencekeeper: ")
        .contains("'--tll'");
    assertThat(typo.err())
        .contains("See 'fencekeeper lease acquire --help'.")
        .doesNotContain("Usage:");
    assertThat(unknownVerb.exitCode()).isEqualTo(2);
    assertThat(unknownVerb.err()).contains("'leese'").contains("lease").doesNotContain("Usage:");
    assertThat(unknownVerb.err().lines()).hasSizeLessThanOrEqualTo(3);
  }

  // Guarantee: what is wrong on its face (a negative TTL, a token that is not positive) is refused
  // by the CLI before anything is sent, with the usage code 2 for both; 9 is for what the cluster
  // refuses against its limits. No cluster runs here, so an exit other than 2 would be the call's
  // UNAVAILABLE.
  @Test
  void inputWrongOnItsFaceIsAUsageErrorWhateverTheFlag() {
    String nowhere = "127.0.0.1:" + LocalPorts.freeNodePort();
    List<CliRun> runs =
        List.of(
            CliRun.run(
                dir,
                "lease",
                "acquire",
                "r",
                "--ttl",
                "-5s",
                "--peers",
                nowhere,
                "--timeout",
                "5s"),
            CliRun.run(
                dir,
                "write",
                "r",
                "k",
                "v",
                "--token",
                "-1",
                "--peers",
                nowhere,
                "--timeout",
                "5s"),
            CliRun.run(
                dir, "write", "r", "k", "v", "--token", "0", "--peers", nowhere, "--timeout", "5s"),
            CliRun.run(dir, "lease", "renew", "r", "-1", "--peers", nowhere, "--timeout", "5s"),
            CliRun.run(
                dir, "lease", "validate", "r", "zero", "--peers", nowhere, "--timeout", "5s"));

    for (CliRun run : runs) {
      assertThat(run.exitCode()).as(run.toString()).isEqualTo(ExitCode.USAGE.code());
      assertThat(run.out()).isEmpty();
    }
    assertThat(runs.get(0).err()).contains("--ttl").contains("'-5s' must be positive");
    assertThat(runs.get(1).err()).contains("--token").contains("'-1' is not a token");
  }

  // Guarantee: every verb that calls the cluster takes --timeout (watch, lease hold and lease run
  // too, with their own meaning).
  @Test
  void everyClientVerbTakesATimeout() {
    List<String> clientVerbs = new ArrayList<>();
    Deque<CommandLine> verbs =
        new ArrayDeque<>(
            List.of(
                FencekeeperCli.commandLine(new CliContext(System.out, System.err, Map.of(), dir))));
    while (!verbs.isEmpty()) {
      CommandLine verb = verbs.pop();
      verbs.addAll(verb.getSubcommands().values());
      boolean callsTheCluster =
          verb.getCommandSpec().mixins().values().stream()
              .anyMatch(m -> m.userObject() instanceof ClientOptions);
      if (callsTheCluster) {
        clientVerbs.add(verb.getCommandSpec().qualifiedName());
        assertThat(verb.getCommandSpec().findOption("--timeout"))
            .as(verb.getCommandSpec().qualifiedName())
            .isNotNull();
      }
    }
    assertThat(clientVerbs)
        .contains(
            "fencekeeper write",
            "fencekeeper read",
            "fencekeeper status",
            "fencekeeper lease acquire",
            "fencekeeper lease run",
            "fencekeeper lease hold",
            "fencekeeper watch",
            "fencekeeper members list",
            "fencekeeper leases list",
            "fencekeeper inspect",
            "fencekeeper backup");
  }

  // Guarantee: `completion bash` prints a script that bash loads and that completes verbs and
  // subcommands; `completion zsh` prints the same script, which under zsh loads bashcompinit
  // itself.
  @Test
  void completionScriptCompletesVerbs() throws Exception {
    CliRun bash = CliRun.run(dir, "completion", "bash");
    CliRun zsh = CliRun.run(dir, "completion", "zsh");
    Path script = dir.resolve("fencekeeper-completion.bash");
    Files.writeString(script, bash.out());

    String completed = completions(script, "fencekeeper lease r");
    String verbs = completions(script, "fencekeeper lea");

    assertThat(bash.exitCode()).as(bash.toString()).isZero();
    assertThat(completed.split(" "))
        .contains("renew", "release", "revoke", "run")
        .doesNotContain("acquire");
    assertThat(verbs.split(" ")).contains("lease", "leases", "leader");
    assertThat(zsh.exitCode()).isZero();
    assertThat(zsh.out()).isEqualTo(bash.out()).contains("ZSH_VERSION").contains("bashcompinit");
    assertThat(CliRun.run(dir, "completion", "fish").exitCode()).isEqualTo(2);
  }

  /** What bash's completion function offers for the last word of {@code line}. */
  private static String completions(Path script, String line) throws Exception {
    String program =
        "source '"
            + script
            + "'\n"
            + "COMP_LINE='"
            + line
            + "'; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<< \"$COMP_LINE\"\n"
            + "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
            + "_complete_fencekeeper fencekeeper \"${COMP_WORDS[COMP_CWORD]}\""
            + " \"${COMP_WORDS[COMP_CWORD-1]}\"\n"
            + "echo \"${COMPREPLY[*]}\"\n";
    Process bash = new ProcessBuilder("bash", "-c", program).redirectErrorStream(true).start();
    String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(bash.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    assertThat(bash.exitValue()).as(out).isZero();
    return out.strip();
  }

  // Guarantee: -q and --json cannot both shape stdout.
  @Test
  void quietAndJsonExcludeEachOther() {
    CliRun run = CliRun.run(dir, "lease", "acquire", "r", "--ttl", "1s", "-q", "--json");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("--quiet and --json");
  }

  // Guarantee: a malformed --peers or environment default is a usage error naming where it came
  // from.
  @Test
  void badPeersAreNamed() {
    CliRun flag = CliRun.run(dir, "read", "r", "k", "--peers", "127.0.0.1");
    CliRun env = CliRun.run(Map.of("FENCEKEEPER_PEERS", "nonsense"), dir, "read", "r", "k");
    CliRun port = CliRun.run(Map.of("FENCEKEEPER_BASE_PORT", "seventy"), dir, "read", "r", "k");

    assertThat(flag.exitCode()).isEqualTo(2);
    assertThat(flag.err()).contains("--peers").contains("127.0.0.1");
    assertThat(env.exitCode()).isEqualTo(2);
    assertThat(env.err()).contains("FENCEKEEPER_PEERS").contains("nonsense");
    assertThat(port.exitCode()).isEqualTo(2);
    assertThat(port.err()).contains("FENCEKEEPER_BASE_PORT").contains("seventy");
  }

  // Guarantee: server with a missing config file exits 2 and names the file.
  @Test
  void serverWithMissingConfigExits2() {
    CliRun run = CliRun.run(dir, "server", "--config", "nowhere.properties");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("cannot read config file").contains("nowhere.properties");
  }

  // Guarantee: server with an invalid config prints the ConfigException's key and value, and exits
  // 2.
  @Test
  void serverWithInvalidConfigNamesKeyAndValue() throws IOException {
    Path config = dir.resolve("n1.properties");
    Files.writeString(config, "node.id=n1\npeers=n1@127.0.0.1:7301\nlease.ttl.min=5x\n");

    CliRun run = CliRun.run(dir, "server", "--config", "n1.properties");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("lease.ttl.min").contains("5x");
  }

  // Guarantee: a config that does not say which node to run is refused before anything starts.
  @Test
  void serverWithoutNodeIdExits2() throws IOException {
    Path config = dir.resolve("cluster.properties");
    Files.writeString(config, "peers=n1@127.0.0.1:7301\n");

    CliRun run = CliRun.run(dir, "server", "--config", config.toString());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("node.id");
  }
}
