package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.ReadConsistency;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads aimed at one node (node info, stale reads) share a client with commands without disturbing
 * them. Ratis numbers one client's async requests in a single sequence, and a node processes them
 * in that order; a request sent to a follower through the leader's stream left a gap the leader
 * waited on until the client's retry, seconds later.
 */
@Timeout(120)
class TargetedReadsClusterTest {
  @TempDir Path dataDir;

  // Guarantee: commands interleaved with node-info queries and stale reads to every node need no
  // retry.
  @Test
  void nodeInfoAndStaleReadsDoNotStallCommands() {
    try (TestCluster cluster = TestCluster.start(dataDir);
        FencingClient client = cluster.newClient("mixed")) {
      cluster.awaitLeader();
      Result lease = client.acquireToken("mixed", Duration.ofMinutes(1), "mixed");
      assertThat(lease.code()).isEqualTo(ResultCode.GRANTED);
      long retriesBefore =
          client.metrics().registry().counter("fencekeeper.client.retries").getCount();
      for (int round = 0; round < 5; round++) {
        for (String peer : new String[] {"n1", "n2", "n3"}) {
          assertThat(Wire.nodeInfo(client, peer, Duration.ofSeconds(30)).getId()).isEqualTo(peer);
          assertThat(
                  client.write("mixed", lease.token(), "k", new byte[] {(byte) round}).isAccepted())
              .isTrue();
          client.read("mixed", "k", ReadConsistency.STALE);
          assertThat(
                  client.write("mixed", lease.token(), "k", new byte[] {(byte) round}).isAccepted())
              .isTrue();
        }
      }
      assertThat(client.metrics().registry().counter("fencekeeper.client.retries").getCount())
          .isEqualTo(retriesBefore);
    }
  }
}
