package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher runs the nodes on a JDK 25 or later, with its ahead-of-time cache, only when there
 * is one; otherwise they run on the launcher's own Java as before. A real {@code ./fencekeeper up},
 * its nodes' command lines read from {@code /proc}.
 */
class NodeJdkIT {
  private static final Duration READY_TIMEOUT = Duration.ofMinutes(3);
  private static final Pattern READY = Pattern.compile("cluster ready, leader (n\\d)");

  @TempDir Path dataDir;
  @TempDir Path scratch;

  // Guarantee: a FENCEKEEPER_NODE_JAVA_HOME older than JDK 25 leaves the nodes on the launcher's
  // Java, without an ahead-of-time cache; the cluster starts and serves.
  @Test
  void nodesStayOnTheLaunchersJavaWhenTheNamedJdkIsOlderThan25() throws Exception {
    Path oldJdk = scratch.resolve("jdk-17");
    Files.createDirectories(oldJdk.resolve("bin"));
    Path realJava = Path.of(System.getProperty("java.home"), "bin", "java");
    Files.createSymbolicLink(oldJdk.resolve("bin/java"), realJava);
    Files.writeString(
        oldJdk.resolve("release"), "JAVA_VERSION=\"17.0.15\"\n", StandardCharsets.UTF_8);

    for (List<String> command : nodeCommandLines(oldJdk.toString())) {
      assertThat(command.get(0)).as("node java").doesNotStartWith(oldJdk.toString());
      assertThat(command).noneMatch(arg -> arg.startsWith("-XX:AOTCache"));
    }
  }

  /** Starts `up` with FENCEKEEPER_NODE_JAVA_HOME={@code nodeJavaHome}; its nodes' command lines. */
  private List<List<String>> nodeCommandLines(String nodeJavaHome) throws Exception {
    Path root =
        Path.of(System.getProperty("fencekeeper.repo.root", "..")).toAbsolutePath().normalize();
    assertThat(root.resolve("tools/target/fencekeeper.jar"))
        .as("run in `verify`, after `package`")
        .exists();
    int basePort = freeBasePort();
    Path data = Files.createTempDirectory(dataDir, "up-");
    Map<String, String> env = new HashMap<>();
    env.put("FENCEKEEPER_DATA_DIR", data.toString());
    env.put("FENCEKEEPER_BASE_PORT", Integer.toString(basePort));
    // The jar Maven has just built: a launcher-triggered build would rebuild it under Maven.
    env.put("FENCEKEEPER_SKIP_BUILD", "1");
    env.put("FENCEKEEPER_NODE_JAVA_HOME", nodeJavaHome);
    try (UpProcess up = UpProcess.start(root, env, scratch.resolve("up-" + basePort + ".err"))) {
      up.awaitLine(READY, READY_TIMEOUT);
      Map<String, Long> pids = up.nodePids();
      assertThat(pids).as(up.describe()).hasSize(3);
      List<List<String>> commands = new java.util.ArrayList<>();
      for (long pid : pids.values()) {
        byte[] cmdline = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
        commands.add(Arrays.asList(new String(cmdline, StandardCharsets.UTF_8).split("\0")));
      }
      return commands;
    }
  }

  private static int freeBasePort() throws IOException {
    for (int attempt = 0; attempt < 50; attempt++) {
      int base = ThreadLocalRandom.current().nextInt(20_000, 60_000);
      if (isFree(base)
          && isFree(base + 1)
          && isFree(base + 2)
          && isFree(LocalClusterLayout.metricsPort(base, 1))
          && isFree(LocalClusterLayout.metricsPort(base, 2))
          && isFree(LocalClusterLayout.metricsPort(base, 3))) {
        return base;
      }
    }
    throw new IOException("no three consecutive free ports found");
  }

  private static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
