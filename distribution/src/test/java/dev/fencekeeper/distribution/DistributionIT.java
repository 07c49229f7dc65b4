package dev.fencekeeper.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.LocalPorts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tarball as an operator gets it: unpacked into a fresh directory, three nodes started from its
 * {@code bin/fencekeeper} with an environment holding nothing but a PATH with {@code java} on it,
 * the README's tour run against them with the same launcher, and the nodes stopped with SIGTERM.
 */
@Timeout(300)
class DistributionIT {
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);

  @TempDir Path dir;
  private final List<Process> nodes = new ArrayList<>();
  private Path home;
  private Path pathWithJavaOnly;
  private String peers;

  private record Run(int exit, String out, String err) {}

  @AfterEach
  void stopNodes() throws InterruptedException {
    for (Process p : nodes) {
      p.destroy();
    }
    for (Process p : nodes) {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  // Guarantee: `./mvnw package` builds fencekeeper-<version>.tar.gz holding bin/fencekeeper, lib/,
  // a commented three-host conf/ and systemd/fencekeeper.service; from it alone, with only java on
  // the PATH, three nodes form a cluster, the README tour gives its results (B's write accepted,
  // A's stale write refused with exit 6, B's value intact), and each node stops cleanly (exit 0) on
  // SIGTERM.
  @Test
  void threeNodesFromTheTarballRunTheTour() throws Exception {
    String version = System.getProperty("fencekeeper.version");
    Path tarball = Path.of(System.getProperty("fencekeeper.tarball"));
    assertThat(tarball).exists().hasFileName("fencekeeper-" + version + ".tar.gz");
    unpack(tarball);
    home = dir.resolve("fencekeeper-" + version);
    assertThat(home.resolve("bin/fencekeeper")).isExecutable();
    assertThat(home.resolve("lib/fencekeeper-" + version + ".jar")).isRegularFile();
    assertThat(home.resolve("systemd/fencekeeper.service"))
        .content()
        .contains("ExecStart=/opt/fencekeeper/bin/fencekeeper server --config");
    String example = Files.readString(home.resolve("conf/fencekeeper.properties"));
    assertThat(example)
        .contains("peers=n1@10.0.0.1:7301,n2@10.0.0.2:7301,n3@10.0.0.3:7301")
        .contains("\n# ");

    pathWithJavaOnly = Files.createDirectories(dir.resolve("path"));
    String java = ProcessHandle.current().info().command().orElseThrow();
    Files.createSymbolicLink(pathWithJavaOnly.resolve("java"), Path.of(java));

    // The shipped example, with this machine's loopback ports and directories in place of the three
    // hosts.
    int[] ports = {LocalPorts.freeNodePort(), LocalPorts.freeNodePort(), LocalPorts.freeNodePort()};
    peers = "n1@127.0.0.1:" + ports[0] + ",n2@127.0.0.1:" + ports[1] + ",n3@127.0.0.1:" + ports[2];
    for (int i = 1; i <= 3; i++) {
      String config =
          example
              .replace("node.id=n1", "node.id=n" + i)
              .replace("peers=n1@10.0.0.1:7301,n2@10.0.0.2:7301,n3@10.0.0.3:7301", "peers=" + peers)
              .replace(
                  "storage.dir=/var/lib/fencekeeper", "storage.dir=" + dir.resolve("data/n" + i))
              .replace("metrics.port=9301", "metrics.port=" + LocalPorts.freeNodePort());
      Path file = dir.resolve("n" + i + ".properties");
      Files.writeString(file, config);
      nodes.add(
          launcher(List.of("server", "--config", file.toString()))
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("n" + i + ".log").toFile())
              .start());
    }

    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    Run status;
    do {
      status = client("status");
      if (status.exit() == 0) {
        break;
      }
      for (int i = 0; i < nodes.size(); i++) {
        assertThat(nodes.get(i).isAlive()).as("node n%d: %s", i + 1, log(i)).isTrue();
      }
      Thread.sleep(1000);
    } while (System.nanoTime() < deadline);
    assertThat(status.exit()).as("status: %s %s", status.out(), status.err()).isZero();

    // The README's tour.
    Run a =
        client(
            "lease", "acquire", "daily-sales-report", "--ttl", "2s", "--owner", "worker-a", "-q");
    assertThat(a.exit()).as(a.err()).isZero();
    String tokenA = a.out().trim();
    Thread.sleep(3000);
    Run b =
        client(
            "lease", "acquire", "daily-sales-report", "--ttl", "30s", "--owner", "worker-b", "-q");
    assertThat(b.exit()).as(b.err()).isZero();
    String tokenB = b.out().trim();
    assertThat(Long.parseLong(tokenB)).isGreaterThan(Long.parseLong(tokenA));
    assertThat(client("lease", "show", "daily-sales-report").out())
        .contains("FOUND daily-sales-report token=" + tokenB);
    Run accepted =
        client(
            "write", "daily-sales-report", "2026-11-29", "totals by worker-b", "--token", tokenB);
    assertThat(accepted.exit()).as(accepted.err()).isZero();
    assertThat(accepted.out()).startsWith("ACCEPTED daily-sales-report/2026-11-29 token=" + tokenB);
    Run stale =
        client(
            "write", "daily-sales-report", "2026-11-29", "totals by worker-a", "--token", tokenA);
    assertThat(stale.exit()).isEqualTo(6);
    assertThat(stale.out() + stale.err()).contains("STALE_TOKEN");
    assertThat(client("read", "daily-sales-report", "2026-11-29").out())
        .contains("FOUND daily-sales-report/2026-11-29 = \"totals by worker-b\"");
    assertThat(client("lease", "release", "daily-sales-report", tokenB).out())
        .startsWith("RELEASED");
    assertThat(client("status").out()).contains("LEADER");

    for (Process p : nodes) {
      p.destroy();
    }
    for (int i = 0; i < nodes.size(); i++) {
      assertThat(nodes.get(i).waitFor(60, TimeUnit.SECONDS)).as("n%d stops", i + 1).isTrue();
      assertThat(nodes.get(i).exitValue()).as("n%d exit code: %s", i + 1, log(i)).isZero();
    }
  }

  // Guarantee: the jar every node runs holds the command line and the server but no class of the
  // drills or the bench, nor any of their dependencies (the PostgreSQL driver, the ZooKeeper
  // client, the chart library, HdrHistogram); the drills ship beside it in lib/drills/ and `drill`
  // finds them, while `bench` is not in the distribution at all.
  @Test
  void theNodesJarHoldsNeitherDrillsNorBench() throws Exception {
    String version = System.getProperty("fencekeeper.version");
    unpack(Path.of(System.getProperty("fencekeeper.tarball")));
    home = dir.resolve("fencekeeper-" + version);
    Path nodeJar = home.resolve("lib/fencekeeper-" + version + ".jar");
    List<String> entries;
    try (ZipFile zip = new ZipFile(nodeJar.toFile())) {
      entries = zip.stream().map(ZipEntry::getName).toList();
    }
    assertThat(entries)
        .contains(
            "dev/fencekeeper/tools/FencekeeperCli.class",
            "dev/fencekeeper/server/FencekeeperServer.class");
    for (String absent :
        List.of(
            "dev/fencekeeper/tools/drill/",
            "dev/fencekeeper/tools/bench/",
            "dev/fencekeeper/jdbc/",
            "org/postgresql/",
            "org/apache/zookeeper/",
            "org/jfree/",
            "org/HdrHistogram/")) {
      assertThat(entries).as("%s in the node's jar", absent).noneMatch(e -> e.startsWith(absent));
    }
    try (Stream<Path> lib = Files.list(home.resolve("lib"))) {
      assertThat(lib.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("fencekeeper-" + version + ".jar", "drills");
    }

    pathWithJavaOnly = Files.createDirectories(dir.resolve("path"));
    String java = ProcessHandle.current().info().command().orElseThrow();
    Files.createSymbolicLink(pathWithJavaOnly.resolve("java"), Path.of(java));
    Run help = run("--help");
    assertThat(help.exit()).as(help.err()).isZero();
    assertThat(help.out())
        .containsPattern("(?m)^\\s+drill\\b")
        .doesNotContainPattern("(?m)^\\s+bench\\b");
    Run drillHelp = run("drill", "--help");
    assertThat(drillHelp.exit()).as(drillHelp.err()).isZero();
    assertThat(drillHelp.out()).contains("stale-writer");
    Run bench = run("bench");
    assertThat(bench.exit()).isEqualTo(2);
    assertThat(bench.err()).contains("Unmatched argument", "'bench'");
  }

  /** bin/fencekeeper with an environment of PATH alone, holding nothing but java. */
  private ProcessBuilder launcher(List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(home.resolve("bin/fencekeeper").toString());
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
    Map<String, String> env = pb.environment();
    env.clear();
    env.put("PATH", pathWithJavaOnly.toString());
    return pb;
  }

  private Run client(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(args));
    command.addAll(List.of("--peers", peers));
    return run(command.toArray(String[]::new));
  }

  private Run run(String... args) throws IOException, InterruptedException {
    List<String> command = List.of(args);
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    Process p = launcher(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    if (!p.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(
          "fencekeeper " + String.join(" ", args) + " did not finish in " + COMMAND_TIMEOUT);
    }
    return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
  }

  private void unpack(Path tarball) throws IOException, InterruptedException {
    Process tar =
        new ProcessBuilder("tar", "-xzf", tarball.toString(), "-C", dir.toString())
            .redirectErrorStream(true)
            .start();
    String output = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(tar.waitFor()).as("tar: %s", output).isZero();
  }

  private String log(int node) {
    try {
      return Files.readString(dir.resolve("n" + (node + 1) + ".log"));
    } catch (IOException e) {
      return e.toString();
    }
  }
}
