package com.example.billing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A three-node cluster in separate processes: {@code java -jar fencekeeper.jar up} on free loopback ports,
 * its files in a directory of its own. The application's JVM never loads server classes.
 */
final class LocalCluster implements AutoCloseable {
  private static final Duration READY_BOUND = Duration.ofSeconds(180);
  private static final Duration STOP_GRACE = Duration.ofSeconds(30);
  /** {@code up} gives node i port base+i-1 and serves its metrics on that port + 100. */
  private static final int METRICS_OFFSET = 100;
  /** ... and the client protocol on that port + 200. */
  private static final int CLIENT_OFFSET = 200;

  private final Process up;
  private final Path dataDir;

  private LocalCluster(Process up, Path dataDir) {
    this.up = up;
    this.dataDir = dataDir;
  }

  /** Starts the cluster and returns once it has a leader. */
  static LocalCluster start(Path jar, Path dir) throws IOException, InterruptedException {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException("no fencekeeper jar at " + jar + " (set -Dfencekeeper.jar)");
    }
    IOException last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      int basePort = freeBasePort();
      Path dataDir = dir.resolve("attempt-" + attempt);
      Files.createDirectories(dataDir);
      Path log = dataDir.resolve("up.log");
      Process up = new ProcessBuilder(List.of(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-Xmx256m", "-jar", jar.toString(),
              "up", "--data-dir", dataDir.toString(), "--base-port", Integer.toString(basePort)))
          .redirectErrorStream(true)
          .redirectOutput(log.toFile())
          .start();
      LocalCluster cluster = new LocalCluster(up, dataDir);
      long deadline = System.nanoTime() + READY_BOUND.toNanos();
      while (System.nanoTime() < deadline && up.isAlive()) {
        if (Files.readString(log, StandardCharsets.UTF_8).contains("cluster ready")) {
          return cluster;
        }
        Thread.sleep(200);
      }
      String output = Files.readString(log, StandardCharsets.UTF_8);
      cluster.close();
      // Another process can take a port between the probe and `up`'s bind: try other ports.
      last = new IOException("fencekeeper up on " + basePort + " did not become ready:\n" + output);
    }
    throw last;
  }

  /** A node's properties file written by {@code up}: it names every peer, so a client can load it. */
  Path nodeConfig() {
    return dataDir.resolve("n1.properties");
  }

  @Override
  public void close() throws InterruptedException {
    List<ProcessHandle> nodes = up.descendants().toList();
    up.destroy(); // SIGTERM: `up` stops its nodes and exits
    if (!up.waitFor(STOP_GRACE.toSeconds(), TimeUnit.SECONDS)) {
      up.destroyForcibly();
    }
    for (ProcessHandle node : nodes) {
      node.destroyForcibly();
    }
  }

  /** A base port whose three Raft ports, metrics ports and client ports are all free now. */
  private static int freeBasePort() throws IOException {
    for (int tries = 0; tries < 100; tries++) {
      int base = ThreadLocalRandom.current().nextInt(20_000, 40_000);
      if (free(base) && free(base + 1) && free(base + 2) && free(base + METRICS_OFFSET)
          && free(base + 1 + METRICS_OFFSET) && free(base + 2 + METRICS_OFFSET)
          && free(base + CLIENT_OFFSET) && free(base + 1 + CLIENT_OFFSET)
          && free(base + 2 + CLIENT_OFFSET)) {
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
