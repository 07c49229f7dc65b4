package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code ./fencekeeper up} as the ITs start it: the jar Maven built in this run, the test's own
 * data directory, free ports away from the 7301 default a developer's own {@code up} may be using,
 * and the environment the client verbs need to reach it. Close it to stop every {@code up} it
 * started.
 */
final class LocalUp implements AutoCloseable {
  static final Duration READY_TIMEOUT = Duration.ofMinutes(3);
  static final Pattern READY = Pattern.compile("cluster ready, leader (n\\d)");

  private final Path root;
  private final Path scratch;
  private final int basePort;
  private final Map<String, String> env = new HashMap<>();
  private final List<UpProcess> started = new ArrayList<>();

  private LocalUp(Path root, Path dataDir, Path scratch, int basePort) {
    this.root = root;
    this.scratch = scratch;
    this.basePort = basePort;
    env.put("FENCEKEEPER_DATA_DIR", dataDir.toString());
    env.put("FENCEKEEPER_BASE_PORT", Integer.toString(basePort));
    int clientPort = basePort + ClusterConfig.CLIENT_PORT_OFFSET;
    env.put(
        "FENCEKEEPER_ENDPOINTS",
        "127.0.0.1:"
            + clientPort
            + ",127.0.0.1:"
            + (clientPort + 1)
            + ",127.0.0.1:"
            + (clientPort + 2));
    // Maven built the jar moments ago in this very run. Should a source change meanwhile (an
    // editor, a concurrent checkout), a launcher-triggered build would rebuild the jar under the
    // running Maven.
    env.put("FENCEKEEPER_SKIP_BUILD", "1");
  }

  /**
   * A cluster on free ports with its data in {@code dataDir}; each start's stderr goes to a file in
   * {@code scratch}.
   */
  static LocalUp on(Path dataDir, Path scratch) throws IOException {
    return new LocalUp(repoRoot(), dataDir, scratch, freeBasePort());
  }

  /** The repository root, holding the jar `package` built. */
  static Path repoRoot() {
    Path root =
        Path.of(System.getProperty("fencekeeper.repo.root", "../..")).toAbsolutePath().normalize();
    assertThat(root.resolve("tools/cli/target/fencekeeper.jar"))
        .as("run in `verify`, after `package`")
        .exists();
    return root;
  }

  Path root() {
    return root;
  }

  /** The environment of {@code up} and of the client verbs run against it; tests may add to it. */
  Map<String, String> env() {
    return env;
  }

  /** Starts {@code up} with {@link #env} and waits until it reports the cluster ready. */
  UpProcess start() throws IOException, InterruptedException {
    UpProcess up =
        UpProcess.start(
            root, env, scratch.resolve("up-" + basePort + "-" + started.size() + ".err"));
    started.add(up);
    up.awaitLine(READY, READY_TIMEOUT);
    return up;
  }

  /** Whether {@link #start} ran. */
  boolean isStarted() {
    return !started.isEmpty();
  }

  @Override
  public void close() {
    started.forEach(UpProcess::close);
  }

  /**
   * Three consecutive free ports and the metrics (base+100..102), client (base+200..202) and JSON
   * gateway ports (base+300..302) `up` derives from them.
   */
  private static int freeBasePort() {
    return LocalPorts.freeBasePort(3, LocalClusterLayout.METRICS_PORT_OFFSET);
  }
}
