package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.config.LocalPorts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code server} as a supervisor runs it: where it logs, what its directories allow, and what it
 * does on SIGHUP and SIGTERM.
 */
@Timeout(180)
class ServerProcessTest {
  private static final Duration START = Duration.ofSeconds(90);

  @TempDir Path dir;

  // Guarantee: with log.dir set, a TLS node logs to log.dir/fencekeeper.log and not to stderr;
  // log.dir and storage.dir (made 0755 beforehand) are private to its user (0700); SIGHUP reloads
  // its certificate and leaves it running (the JVM's default would stop it with exit 0, and
  // Restart=on-failure would leave it down); SIGTERM then stops it with exit 0, and the log file
  // says it stopped.
  @Test
  void aNodeLogsToLogDirAndSurvivesSighup() throws Exception {
    Path storage = Files.createDirectories(dir.resolve("data"));
    Files.setPosixFilePermissions(storage, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path logs = dir.resolve("logs");
    Path config = tlsConfig(storage, logs);
    try (CliProcess node = CliProcess.start(dir, "n1", "server", "--config", config.toString())) {
      Path log = logs.resolve("fencekeeper.log");
      await()
          .atMost(START)
          .until(() -> Files.exists(log) && Files.readString(log).contains("serving on"));

      assertThat(node.err()).doesNotContain("serving on").doesNotContain("INFO");
      assertThat(mode(logs)).isEqualTo("rwx------");
      assertThat(mode(storage)).isEqualTo("rwx------");

      // Again until a reload is logged: one that lands while the node still starts only says so.
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofSeconds(2))
          .until(
              () -> {
                new ProcessBuilder("kill", "-HUP", Long.toString(node.pid())).start().waitFor();
                return Files.readString(log).contains("SIGHUP: node n1 reloaded its TLS");
              });
      Thread.sleep(1000);
      assertThat(node.isAlive()).as(node.describe()).isTrue();

      node.terminate();
      assertThat(node.awaitExit(Duration.ofSeconds(60))).as(node.describe()).isZero();
      // The stop is in the log file too, not only on stderr.
      assertThat(Files.readString(log))
          .contains("node n1 was told to stop (SIGTERM or Ctrl-C)")
          .contains("fencekeeper node n1 stopping")
          .contains("fencekeeper node n1 stopped");
    }
  }

  // Guarantee: a TLS node started with SIGHUP ignored (as under nohup), which the JVM then cannot
  // handle, says at start that SIGHUP cannot reload its TLS files, instead of leaving an operator
  // to wonder why a reload logs nothing; a SIGHUP leaves it running.
  @Test
  void aNodeStartedWithSighupIgnoredSaysItCannotReload() throws Exception {
    Path logs = dir.resolve("logs");
    Path config = tlsConfig(dir.resolve("data"), logs);
    try (CliProcess node =
        CliProcess.startWithHangupIgnored(dir, "n1", "server", "--config", config.toString())) {
      Path log = logs.resolve("fencekeeper.log");
      await()
          .atMost(START)
          .until(() -> Files.exists(log) && Files.readString(log).contains("serving on"));
      assertThat(Files.readString(log))
          .contains("node n1 was started with SIGHUP ignored")
          .contains("restart the node to load new ones");

      new ProcessBuilder("kill", "-HUP", Long.toString(node.pid())).start().waitFor();
      Thread.sleep(1000);
      assertThat(node.isAlive()).as(node.describe()).isTrue();
      assertThat(Files.readString(log)).doesNotContain("reloaded its TLS");
    }
  }

  // Guarantee: without log.dir a node logs to stderr, and writes no log file of its own anywhere
  // (storage.dir holds Raft data only).
  @Test
  void withoutLogDirANodeLogsToStderrOnly() throws Exception {
    Path storage = dir.resolve("data");
    Path config = config("storage.dir=" + storage);
    try (CliProcess node = CliProcess.start(dir, "n1", "server", "--config", config.toString())) {
      node.awaitErr("serving on", START);
      assertThat(storage.resolve("logs")).doesNotExist();
      try (var files = Files.walk(dir)) {
        assertThat(files.filter(p -> p.getFileName().toString().endsWith(".log"))).isEmpty();
      }
      node.terminate();
      assertThat(node.awaitExit(Duration.ofSeconds(60))).as(node.describe()).isZero();
    }
  }

  /** A TLS node's config, its certificates written under {@code dir/certs}. */
  private Path tlsConfig(Path storage, Path logs) throws IOException {
    Path certs = dir.resolve("certs");
    Certificates.writeLocalSet(certs, Duration.ofDays(1));
    return config(
        "storage.dir=" + storage,
        "log.dir=" + logs,
        "tls.cert=" + certs.resolve("node.crt"),
        "tls.key=" + certs.resolve("node.key"),
        "tls.trust=" + certs.resolve("ca.crt"));
  }

  private Path config(String... lines) throws IOException {
    Path file = dir.resolve("n1.properties");
    StringBuilder text =
        new StringBuilder("node.id=n1\npeers=n1@127.0.0.1:" + LocalPorts.freeNodePort() + "\n");
    for (String line : lines) {
      text.append(line).append('\n');
    }
    Files.writeString(file, text);
    return file;
  }

  private static String mode(Path path) throws IOException {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
  }
}
