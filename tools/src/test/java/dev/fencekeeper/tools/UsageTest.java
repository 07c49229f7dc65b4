package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

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

/** Mistakes on the command line: refused before anything is sent, with exit 2 and a message naming the mistake. */
class UsageTest {
  @TempDir Path dir;

  // Guarantee: --help explains the verbs and prints the exit-code table, and exits 0.
  @Test
  void helpListsVerbsAndExitCodes() {
    CliRun run = CliRun.run(dir, "--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("server", "up", "lease", "write", "read", "status", "Exit codes:");
    assertThat(run.out()).contains("members", "leader", "snapshot", "leases", "keys", "inspect", "metrics");
    for (ExitCode code : ExitCode.values()) {
      assertThat(run.out()).contains(String.format("%2d  %s", code.code(), code.meaning()));
    }
  }

  // Guarantee: every verb's help renders as written. A lone '%' in a description makes picocli print its raw
  // text and a warning on stderr instead (as `bench --help` did with "5 % of their CPU").
  @Test
  void everyVerbsHelpRendersWithoutFormatWarnings() {
    PrintStream originalErr = System.err;
    ByteArrayOutputStream picocliWarnings = new ByteArrayOutputStream();
    List<String> rendered = new ArrayList<>();
    try {
      System.setErr(new PrintStream(picocliWarnings, true, StandardCharsets.UTF_8));
      Deque<CommandLine> verbs = new ArrayDeque<>(List.of(FencekeeperCli.commandLine(
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

    assertThat(rendered).contains("fencekeeper bench", "fencekeeper lease acquire");
    assertThat(picocliWarnings.toString(StandardCharsets.UTF_8)).isEmpty();
  }

  // Guarantee: --version names this build and the Ratis it embeds.
  @Test
  void versionNamesTheBuild() {
    CliRun run = CliRun.run(dir, "--version");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).containsPattern("fencekeeper \\d+\\.\\d+").contains("Apache Ratis 3.");
  }

  // Guarantee: no verb, an unknown verb, or a bare group is a usage error (2), never a silent success.
  @Test
  void missingOrUnknownVerbsAreUsageErrors() {
    assertThat(CliRun.run(dir).exitCode()).isEqualTo(2);
    assertThat(CliRun.run(dir, "frobnicate").exitCode()).isEqualTo(2);
    assertThat(CliRun.run(dir, "lease").exitCode()).isEqualTo(2);
    for (String group : List.of("members", "leader", "snapshot", "leases", "keys")) {
      assertThat(CliRun.run(dir, group).exitCode()).as(group).isEqualTo(2);
    }
  }

  // Guarantee: a TTL without a unit is refused (the factor-of-1000 mistake), naming the option and the value.
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

    assertThat(both.exitCode()).isEqualTo(2);
    assertThat(both.err()).contains("either <value> or --delete");
    assertThat(neither.exitCode()).isEqualTo(2);
    assertThat(neither.err()).contains("missing <value>");
  }

  // Guarantee: -q and --json cannot both shape stdout.
  @Test
  void quietAndJsonExcludeEachOther() {
    CliRun run = CliRun.run(dir, "lease", "acquire", "r", "--ttl", "1s", "-q", "--json");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("--quiet and --json");
  }

  // Guarantee: a malformed --peers or environment default is a usage error naming where it came from.
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

  // Guarantee: server with an invalid config prints the ConfigException's key and value, and exits 2.
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
