package dev.fencekeeper.tools;

import static dev.fencekeeper.tools.CliRun.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fencekeeper.client.FencingClient;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.stream.StreamSupport;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A follower that stopped while the leader's log grew shows as lagging in {@code status} and {@code
 * members list}, and {@code leader transfer --to} it is refused at once. Its own cluster: the test
 * stops a node.
 */
@Timeout(180)
class FollowerLagVerbsTest {
  // A bound shorter than the 10 s default, not to wait it out; the leader samples every 200 ms.
  @RegisterExtension
  static final InProcessCluster cluster =
      InProcessCluster.perClassWith("health.max-follower-lag", "3s");

  private static JsonNode node(JsonNode array, String id) {
    return StreamSupport.stream(array.spliterator(), false)
        .filter(n -> n.get("id").asText().equals(id))
        .findFirst()
        .orElseThrow();
  }

  // Guarantee: once the leader counts a stopped follower as lagging (health.max-follower-lag, 3 s
  // here), status shows its match index and lag in the table and names it below it, --json
  // has matchIndex/lagEntries/lagSeconds/lagging and the top-level "lagging" list; members list
  // the same; and leader transfer --to it exits 11 (UNAVAILABLE) within seconds, saying it lags,
  // with the leader unchanged.
  @Test
  void laggingFollowerIsShownAndTransferToItRefused() throws IOException {
    // The leader reports its followers once its first sample of them is in (every 200 ms).
    JsonNode before =
        Awaitility.await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () -> json(cluster.cli("status", "--json")),
                status ->
                    StreamSupport.stream(status.get("nodes").spliterator(), false)
                        .allMatch(
                            n ->
                                n.get("id").asText().equals(status.get("leader").asText())
                                    || n.has("lagging")));
    String leader = before.get("leader").asText();
    String follower =
        StreamSupport.stream(before.get("nodes").spliterator(), false)
            .map(n -> n.get("id").asText())
            .filter(id -> !id.equals(leader))
            .findFirst()
            .orElseThrow();
    JsonNode healthy = node(before.get("nodes"), follower);
    assertThat(healthy.get("lagging").asBoolean()).isFalse();
    assertThat(healthy.has("matchIndex")).isTrue();
    assertThat(node(before.get("nodes"), leader).has("matchIndex")).isFalse();

    cluster.stopNode(follower);
    try (FencingClient client = FencingClient.connect(cluster.config())) {
      for (int i = 0; i < 5; i++) {
        client.acquire("lag-cli-" + i, Duration.ofSeconds(30));
      }
    }

    // A status waits its --timeout (3 s by default) for the stopped node: the polls give it less.
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () -> {
              JsonNode status = json(cluster.cli("status", "--json", "--timeout", "1s"));
              // A status that heard from no node within its second has no node list: poll again.
              assertThat(status.has("nodes")).as("status --json: %s", status).isTrue();
              JsonNode lagging = node(status.get("nodes"), follower);
              assertThat(lagging.get("lagging").asBoolean()).isTrue();
              assertThat(lagging.get("lagEntries").asLong()).isGreaterThanOrEqualTo(5);
              assertThat(lagging.get("lagSeconds").asDouble()).isGreaterThan(3.0);
              assertThat(status.get("lagging").toString()).isEqualTo("[\"" + follower + "\"]");
            });
    // With the default --timeout, beside the rest: the stopped node keeps it waiting that long.
    CompletableFuture<CliRun> table = CompletableFuture.supplyAsync(() -> cluster.cli("status"));

    JsonNode members = json(cluster.cli("members", "list", "--json"));
    assertThat(node(members.get("members"), follower).get("lagging").asBoolean()).isTrue();
    assertThat(members.get("lagging").toString()).isEqualTo("[\"" + follower + "\"]");
    CliRun membersTable = cluster.cli("members", "list");
    assertThat(membersTable.out().lines().findFirst().orElseThrow())
        .matches("ID +ADDRESS +MATCH +LAG");
    assertThat(membersTable.out()).contains(follower + " lagging: ");

    long asked = System.nanoTime();
    CliRun transfer = cluster.cli("leader", "transfer", "--to", follower);
    Duration took = Duration.ofNanos(System.nanoTime() - asked);
    assertThat(transfer.exitCode()).as(transfer.toString()).isEqualTo(ExitCode.UNAVAILABLE.code());
    assertThat(transfer.out() + transfer.err())
        .contains("refusing to transfer leadership to " + follower + ": it lags");
    assertThat(took).isLessThan(Duration.ofSeconds(8));
    assertThat(json(cluster.cli("members", "list", "--json")).get("leader").asText())
        .isEqualTo(leader);
    assertThat(table.join().out())
        .containsPattern(follower + " .* \\d+ +\\d+/[\\d.]+s\\n")
        .contains(follower + " lagging: ");
  }
}
