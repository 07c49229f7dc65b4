package dev.fencekeeper.examples.report;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A three-node cluster in separate processes: {@code java -jar fencekeeper.jar up} on free loopback
 * ports, its files in a directory of its own. The application reaches it through the {@code
 * fencekeeper.endpoints=} line {@code up} prints, as a developer pastes it.
 */
final class LocalCluster implements AutoCloseable {
  private static final Duration READY_BOUND = Duration.ofSeconds(180);
  private static final Duration STOP_GRACE = Duration.ofSeconds(30);
  private static final String PEERS_LINE = "fencekeeper.endpoints=";
  /** {@code up} gives node i port base+i-1 and serves its metrics on that port + 100. */
  private static final int METRICS_OFFSET = 100;

  private final Process up;
  private final String peers;

  private LocalCluster(Process up, String peers) {
    this.up = up;
    this.peers = peers;
  }

  /** Starts the cluster and returns once it has a leader. */
  static LocalCluster start(Path jar, Path dir) throws IOException, InterruptedException {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException("no fencekeeper jar at " + jar + " (set -Dfencekeeper.jar)");
    }
    IOException last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      int basePort = freeBasePort();
      Files.createDirectories(dir);
      Path dataDir = Files.createTempDirectory(dir, "up-");
      Path log = dataDir.resolve("up.log");
      Process up =
          new ProcessBuilder(
                  List.of(
                      Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                      "-Xmx256m",
                      "-jar",
                      jar.toString(),
                      "up",
                      "--data-dir",
                      dataDir.toString(),
                      "--base-port",
                      Integer.toString(basePort)))
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      long deadline = System.nanoTime() + READY_BOUND.toNanos();
      try {
        while (System.nanoTime() < deadline && up.isAlive()) {
          Optional<String> peers =
              Files.readAllLines(log, StandardCharsets.ISO_8859_1).stream()
                  .filter(line -> line.startsWith(PEERS_LINE))
                  .map(line -> line.substring(PEERS_LINE.length()).trim())
                  .findFirst();
          if (peers.isPresent()) {
            return new LocalCluster(up, peers.get());
          }
          Thread.sleep(200);
        }
      } catch (IOException | InterruptedException | RuntimeException e) {
        // Interrupted by a test timeout, or the log unreadable: never leave the cluster running.
        new LocalCluster(up, null).close();
        throw e;
      }
      String output = Files.readString(log, StandardCharsets.UTF_8);
      new LocalCluster(up, null).close();
      // Another process can take a port between the probe and `up`'s bind: try other ports.
      last = new IOException("fencekeeper up on " + basePort + " did not become ready:\n" + output);
    }
    throw last;
  }

  /** The value of {@code fencekeeper.endpoints}, as {@code up} printed it. */
  String peers() {
    return peers;
  }

  @Override
  public void close() {
    List<ProcessHandle> nodes = up.descendants().toList();
    up.destroy(); // SIGTERM: `up` stops its nodes and exits
    try {
      if (!up.waitFor(STOP_GRACE.toSeconds(), TimeUnit.SECONDS)) {
        up.destroyForcibly();
      }
    } catch (InterruptedException e) {
      up.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    for (ProcessHandle node : nodes) {
      node.destroyForcibly();
    }
  }

  /** A base port whose three Raft ports and three metrics ports are all free now. */
  private static int freeBasePort() throws IOException {
    for (int tries = 0; tries < 100; tries++) {
      int base = ThreadLocalRandom.current().nextInt(20_000, 40_000);
      if (free(base)
          && free(base + 1)
          && free(base + 2)
          && free(base + METRICS_OFFSET)
          && free(base + 1 + METRICS_OFFSET)
          && free(base + 2 + METRICS_OFFSET)) {
        return base;
      }
    }
    throw new IOException("no free ports found");
  }

  private static boolean free(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress("127.0.0.1", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
