package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client created before every node went down serves again once they are back (found by `drill
 * restart-all`).
 */
@Timeout(180)
class FullOutageClientClusterTest {
  @TempDir Path dataDir;

  // Guarantee: a long-lived FencingClient survives an outage of every node that outlasts its
  // retries (after which Ratis fails the client's ordered request stream for good): while no node
  // runs, calls answer UNAVAILABLE; once the nodes are back, the same client writes and reads
  // again.
  @Test
  void aClientOutlivesAnOutageLongerThanItsRetries() throws Exception {
    Properties quickGiveUp = new Properties();
    quickGiveUp.setProperty(
        "client.request.timeout", "500ms"); // retries run out after a few seconds
    try (TestCluster cluster = TestCluster.start(dataDir, quickGiveUp)) {
      cluster.awaitLeader();
      FencingClient client = cluster.newClient("survivor");
      Result lease = client.acquireToken("ledger", Duration.ofSeconds(60), "survivor");
      assertThat(lease.code()).isEqualTo(ResultCode.GRANTED);

      cluster.stopAll();
      for (int i = 0; i < 3; i++) { // each of these runs out of retries
        WriteResult during = client.write("ledger", lease.token(), "k", "during".getBytes());
        assertThat(during.code()).as(during.toString()).isEqualTo(ResultCode.UNAVAILABLE);
      }
      for (String id : new String[] {"n1", "n2", "n3"}) {
        cluster.startNode(id);
      }

      AtomicReference<WriteResult> after = new AtomicReference<>();
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(500))
          .until(
              () -> {
                after.set(client.write("ledger", lease.token(), "k", "after".getBytes()));
                return after.get().code() != ResultCode.UNAVAILABLE;
              });
      assertThat(after.get().code()).as(after.get().toString()).isEqualTo(ResultCode.ACCEPTED);
      assertThat(client.read("ledger", "k").valueAsString()).isEqualTo("after");
    }
  }
}
