package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.testing.TestCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What a snapshot download killed midway leaves behind is removed when the node starts again. */
@Timeout(120)
class AbandonedSnapshotDownloadTest {
  @TempDir Path dataDir;

  // Guarantee: a node started with tmp/snapshot-<id> directories in its group directory (Ratis's
  // partial snapshot downloads; a kill mid-install leaves them, megabytes each) deletes them at
  // start, touches nothing else in tmp/, and serves as before.
  @Test
  void partialSnapshotDownloadsAreRemovedAtStart() throws IOException {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      FencingClient client = cluster.newClient("worker");
      Lease grant = client.acquire("r", Duration.ofSeconds(30));
      cluster.stopNode("n3");

      Path tmp = groupDir(dataDir.resolve("n3")).resolve("tmp");
      Path partial = tmp.resolve("snapshot-client-5A3F-1").resolve("sm");
      Files.createDirectories(partial);
      Files.write(partial.resolve("snapshot.1_42"), new byte[256 * 1024]);
      Files.createDirectories(tmp.resolve("snapshot-client-77-2"));
      Path unrelated = Files.writeString(tmp.resolve("not-a-download"), "kept");

      cluster.startNode("n3");

      try (Stream<Path> left = Files.list(tmp)) {
        assertThat(left.map(p -> p.getFileName().toString())).containsExactly("not-a-download");
      }
      assertThat(unrelated).hasContent("kept");
      client.write("r", grant.token(), List.of(KeyChange.put("k", "after")), "req-1");
      long leaderApplied = cluster.lastApplied(cluster.awaitLeader());
      Awaitility.await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> cluster.lastApplied("n3") >= leaderApplied);
    }
  }

  private static Path groupDir(Path storageDir) throws IOException {
    try (Stream<Path> dirs = Files.list(storageDir)) {
      return dirs.filter(d -> Files.isDirectory(d.resolve("current"))).findFirst().orElseThrow();
    }
  }
}
