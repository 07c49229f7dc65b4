package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.proto.FollowerProgress;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A follower that stops advancing shows on the leader within seconds: in its per-follower gauges,
 * its {@code /health}, its self-description, and a refused leadership transfer; and clears once the
 * follower has caught up.
 */
@Timeout(180)
class FollowerLagClusterTest {
  @TempDir Path dataDir;
  TestCluster cluster;

  @BeforeEach
  void startCluster() {
    Properties extra = new Properties();
    extra.setProperty("health.max-follower-lag", "1s");
    cluster = TestCluster.startWithMetrics(dataDir, extra);
  }

  @AfterEach
  void stopCluster() {
    cluster.close();
  }

  private static String series(String family, String peer) {
    return family + "{peer=\"" + peer + "\"}";
  }

  private FollowerProgress progressOf(FencingClient client, String leader, String follower) {
    NodeInfo info = Wire.nodeInfo(client, leader, Duration.ofSeconds(5));
    return info.getFollowersList().stream()
        .filter(f -> f.getId().equals(follower))
        .findFirst()
        .orElseThrow(() -> new AssertionError(leader + " reports no follower " + follower));
  }

  // Guarantee: within seconds of a follower stopping while the leader's log grows, the leader's
  // /metrics show it lagging (match index stuck, entries and seconds behind), its /health answers
  // 200 with "redundancy degraded" naming it, its NodeInfo reports it lagging, and a transfer of
  // leadership to it is refused at once (UNAVAILABLE, leader unchanged, writes still served). Once
  // it is back and caught up, all of that clears.
  @Test
  void stoppedFollowerShowsAsLaggingOnTheLeaderUntilItCatchesUp() {
    String leader = cluster.awaitLeader();
    String follower =
        cluster.running().keySet().stream().filter(id -> !id.equals(leader)).findFirst().get();
    int port = cluster.metricsPort(leader);
    try (FencingClient client = cluster.newClient("lag-writer");
        FencingAdmin admin = FencingAdmin.connect(cluster.config())) {
      await()
          .atMost(Duration.ofSeconds(15))
          .untilAsserted(
              () -> {
                Map<String, Double> m = Scrape.metrics(port);
                assertThat(m).containsEntry(series("fencekeeper_follower_lagging", follower), 0.0);
                assertThat(m).containsKey(series("fencekeeper_follower_match_index", follower));
                assertThat(Scrape.get(port, "/health").body()).isEqualTo("ready\n");
              });

      cluster.stopNode(follower);
      for (int i = 0; i < 5; i++) {
        client.acquire("lag-" + i, Duration.ofSeconds(30));
      }

      long stoppedAt = System.nanoTime();
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                Map<String, Double> m = Scrape.metrics(port);
                assertThat(m).containsEntry(series("fencekeeper_follower_lagging", follower), 1.0);
                assertThat(m.get(series("fencekeeper_follower_lag_entries", follower)))
                    .isGreaterThanOrEqualTo(5.0);
                assertThat(m.get(series("fencekeeper_follower_lag_seconds", follower)))
                    .isGreaterThan(1.0);
                Scrape.Reply health = Scrape.get(port, "/health");
                assertThat(health.status()).isEqualTo(200);
                assertThat(health.body())
                    .startsWith("ready; redundancy degraded: follower " + follower + " is ")
                    .contains("(health.max-follower-lag 1s)");
              });
      assertThat(Duration.ofNanos(System.nanoTime() - stoppedAt))
          .isLessThan(Duration.ofSeconds(10));
      FollowerProgress progress = progressOf(client, leader, follower);
      assertThat(progress.getLagging()).isTrue();
      assertThat(progress.getLagEntries()).isGreaterThanOrEqualTo(5);
      assertThat(progress.getLagSeconds()).isGreaterThan(1.0);

      long asked = System.nanoTime();
      FencingException refused =
          catchThrowableOfType(() -> admin.transferLeadership(follower), FencingException.class);
      Duration took = Duration.ofNanos(System.nanoTime() - asked);
      assertThat(refused).isNotNull();
      assertThat(refused.code()).isEqualTo(ResultCode.UNAVAILABLE);
      assertThat(refused.result().message())
          .contains("refusing to transfer leadership to " + follower + ": it lags");
      assertThat(took).isLessThan(Duration.ofSeconds(3));
      assertThat(cluster.leader()).contains(leader);
      long writeAsked = System.nanoTime();
      client.acquire("after-refusal", Duration.ofSeconds(30));
      assertThat(Duration.ofNanos(System.nanoTime() - writeAsked))
          .isLessThan(Duration.ofSeconds(2));

      cluster.startNode(follower);
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                Map<String, Double> m = Scrape.metrics(port);
                assertThat(m).containsEntry(series("fencekeeper_follower_lagging", follower), 0.0);
                assertThat(Scrape.get(port, "/health").body()).isEqualTo("ready\n");
                assertThat(progressOf(client, leader, follower).getLagging()).isFalse();
              });
    }
  }

  // Guarantee: only the leader exports the per-follower series: a follower's /metrics has none,
  // and a leader that hands over leadership stops exporting them while the new leader starts.
  @Test
  void onlyTheLeaderExportsFollowerSeries() {
    String leader = cluster.awaitLeader();
    String follower =
        cluster.running().keySet().stream().filter(id -> !id.equals(leader)).findFirst().get();
    awaitFollowerSeries(leader, true);
    assertThat(Scrape.metrics(cluster.metricsPort(follower)).keySet())
        .noneMatch(k -> k.startsWith("fencekeeper_follower_"));

    cluster.transferLeadership(follower);

    awaitFollowerSeries(follower, true);
    awaitFollowerSeries(leader, false);
  }

  private void awaitFollowerSeries(String node, boolean present) {
    await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () -> {
              long series =
                  Scrape.metrics(cluster.metricsPort(node)).keySet().stream()
                      .filter(k -> k.startsWith("fencekeeper_follower_lag_seconds{"))
                      .count();
              assertThat(series).as(node).isEqualTo(present ? 2 : 0);
            });
  }
}
