package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.server.ClusterIdentity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator's mistake: a member's storage is wiped and {@code server} is started again without
 * {@code --join}. It must not rejoin (and vote) but exit 23 with one line naming the way back.
 */
@Timeout(180)
class WipedMemberServerTest {
  @TempDir Path dir;

  // Guarantee: `server` on a wiped member's config, without --join, exits 23 at once, with one
  // stderr line that says what happened and names the way back; nothing of Raft is written.
  @Test
  void serverOnAWipedMembersStorageExitsWithTheWayBack() throws Exception {
    try (InProcessCluster cluster = InProcessCluster.start(dir.resolve("cluster"))) {
      Path n1 = cluster.dataDir().resolve("n1");
      Awaitility.await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> ClusterIdentity.open(n1).hasSeen("n3"));
      cluster.stopNode("n3");
      // n3's storage, wiped: an empty directory.
      Path n3 = dir.resolve("n3-wiped");
      Files.createDirectories(n3);
      Path config = dir.resolve("n3.properties");
      ClusterConfig.forPeers(cluster.peersWithIds())
          .withNodeId("n3")
          .withStorageDir(n3)
          .store(config);

      // Should the node start after all, its parent's end stops it, so the test ends either way.
      Process parent = new ProcessBuilder("sleep", "120").start();
      CliRun[] server = new CliRun[1];
      Thread serverThread =
          new Thread(
              () ->
                  server[0] =
                      CliRun.run(
                          dir,
                          "server",
                          "--config",
                          config.toString(),
                          "--parent-pid",
                          Long.toString(parent.pid())));
      try {
        serverThread.start();
        serverThread.join(Duration.ofSeconds(30).toMillis());
        assertThat(serverThread.isAlive()).as("the wiped member is running").isFalse();
      } finally {
        parent.destroyForcibly();
        serverThread.join(60_000);
      }
      assertThat(server[0].exitCode())
          .as(server[0].toString())
          .isEqualTo(ExitCode.NOT_THIS_CLUSTER.code());
      assertThat(server[0].err().lines().filter(l -> l.startsWith("fencekeeper: ")))
          .singleElement()
          .asString()
          .startsWith("fencekeeper: node n3 refused to start: its storage " + n3 + " is empty")
          .contains("`fencekeeper members remove n3`", "--join", "docs/operations.md")
          .doesNotContain("backup");
      try (Stream<Path> written = Files.list(n3)) {
        assertThat(written).noneMatch(Files::isDirectory);
      }
    }
  }
}
