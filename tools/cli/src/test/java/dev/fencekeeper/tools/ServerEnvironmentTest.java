package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code server} reads its settings from FENCEKEEPER_<KEY> variables as well as from --config. */
class ServerEnvironmentTest {
  @TempDir Path dir;

  // Guarantee: a FENCEKEEPER_<KEY> variable overrides the file's key in `server`: a bad value there
  // is refused at start (exit 2) naming the variable, although the file alone is valid.
  @Test
  void environmentOverridesTheConfigFile() throws IOException {
    Path config = dir.resolve("n1.properties");
    Files.writeString(config, "node.id=n1\npeers=n1@127.0.0.1:7301\nmetrics.port=9301\n");

    CliRun run =
        CliRun.run(
            Map.of("FENCEKEEPER_METRICS_PORT", "nine"),
            dir,
            "server",
            "--config",
            config.toString());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("FENCEKEEPER_METRICS_PORT").contains("metrics.port: 'nine'");
  }

  // Guarantee: a node reads its members only from its file: without --config `server` says so
  // (exit 2) instead of starting a node on defaults, also when a shell exports the clients'
  // FENCEKEEPER_PEERS.
  @Test
  void withoutConfigANodeAsksForItsFile() {
    CliRun none = CliRun.run(Map.of(), dir, "server");
    assertThat(none.exitCode()).isEqualTo(2);
    assertThat(none.err()).contains("properties file with peers");

    CliRun fromClients =
        CliRun.run(Map.of("FENCEKEEPER_PEERS", "n1@127.0.0.1:7301"), dir, "server");
    assertThat(fromClients.exitCode()).isEqualTo(2);
    assertThat(fromClients.err()).contains("properties file with peers");
  }
}
