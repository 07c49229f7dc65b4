package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher runs the nodes on a JDK 25 or later, with its ahead-of-time cache, only when there
 * is one; otherwise they run on the launcher's own Java as before. A real {@code ./fencekeeper up},
 * its nodes' command lines read from {@code /proc}.
 */
class NodeJdkIT {
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
    try (LocalUp local = LocalUp.on(dataDir, scratch)) {
      local.env().put("FENCEKEEPER_NODE_JAVA_HOME", nodeJavaHome);
      UpProcess up = local.start();
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
}
