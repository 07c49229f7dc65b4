package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.StorageFullException;
import dev.fencekeeper.testing.TestCluster;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose storage (a 48 MiB tmpfs; needs root) falls below its free-space reserve stops its
 * Raft server, says why on {@code /health} and in a gauge, refuses to start while the disk is full,
 * and starts and catches up once space is freed.
 */
@Timeout(180)
class StorageFullClusterTest {
  private static final long RESERVE = 16L << 20;
  @TempDir Path dataDir;

  // Guarantee: below the reserve, n3's /health is 503 "cannot persist",
  // fencekeeper.storage.writable is 0, storageExhausted() completes and its Raft server is closed,
  // while the other two keep serving; a start on the full disk throws StorageFullException; after
  // the filler is deleted n3 starts and catches up.
  @Test
  void nodeBelowItsReserveStopsSaysWhyAndComesBackWhenSpaceReturns() throws Exception {
    Path n3 = dataDir.resolve("n3");
    Files.createDirectories(n3);
    run(
        "mount",
        "-t",
        "tmpfs",
        "-o",
        "size=" + (48L << 20),
        "fencekeeper-test-full",
        n3.toString());
    System.setProperty(FencekeeperServer.STORAGE_RESERVE_PROPERTY, Long.toString(RESERVE));
    try (TestCluster cluster = TestCluster.startWithMetrics(dataDir, new Properties())) {
      cluster.awaitLeader();
      FencingClient client = cluster.newClient("worker");
      assertThat(client.acquireToken("before", Duration.ofSeconds(30), "worker").code())
          .isEqualTo(ResultCode.GRANTED);
      int port = cluster.metricsPort("n3");
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> Scrape.get(port, "/health").status() == 200);
      FencekeeperServer node = cluster.node("n3");

      Path filler = n3.resolve("filler");
      fill(filler, n3, RESERVE / 2);

      await().atMost(Duration.ofSeconds(15)).until(() -> node.storageExhausted().isDone());
      Scrape.Reply health = Scrape.get(port, "/health");
      assertThat(health.status()).isEqualTo(503);
      assertThat(health.body())
          .contains("cannot persist")
          .contains("below the reserve of " + RESERVE);
      assertThat(
              node.metrics()
                  .registry()
                  .getGauges()
                  .get(NodeMetric.STORAGE_WRITABLE.dropwizardName())
                  .getValue())
          .isEqualTo(0L);
      assertThat(node.raftServer().getLifeCycleState().isClosingOrClosed()).isTrue();
      assertThat(client.acquireToken("during", Duration.ofSeconds(30), "worker").code())
          .isEqualTo(ResultCode.GRANTED);

      cluster.stopNode("n3");
      assertThatThrownBy(() -> cluster.startNode("n3"))
          .hasCauseInstanceOf(StorageFullException.class);

      Files.delete(filler);
      cluster.startNode("n3");
      assertThat(client.acquireToken("after", Duration.ofSeconds(30), "worker").code())
          .isEqualTo(ResultCode.GRANTED);
      long leaderApplied = cluster.lastApplied(cluster.awaitLeader());
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> cluster.lastApplied("n3") >= leaderApplied);
      assertThat(
              cluster
                  .node("n3")
                  .metrics()
                  .registry()
                  .getGauges()
                  .get(NodeMetric.STORAGE_WRITABLE.dropwizardName())
                  .getValue())
          .isEqualTo(1L);
    } finally {
      System.clearProperty(FencekeeperServer.STORAGE_RESERVE_PROPERTY);
      run("umount", "-l", n3.toString());
    }
  }

  private static void fill(Path filler, Path mount, long leaveFree) throws IOException {
    try (OutputStream out = Files.newOutputStream(filler)) {
      byte[] chunk = new byte[1 << 20];
      long free = Files.getFileStore(mount).getUsableSpace();
      while (free > leaveFree) {
        out.write(chunk, 0, (int) Math.min(chunk.length, free - leaveFree));
        out.flush();
        free = Files.getFileStore(mount).getUsableSpace();
      }
    }
  }

  private static void run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue())
        .as("%s (this test needs root): %s", String.join(" ", command), output)
        .isZero();
  }
}
