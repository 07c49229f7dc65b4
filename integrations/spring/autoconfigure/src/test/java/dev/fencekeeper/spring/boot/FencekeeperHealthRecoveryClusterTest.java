package dev.fencekeeper.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.spring.health.FencekeeperHealthIndicator;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The health indicator of a running application across a whole-cluster outage: UP, then DOWN within
 * its bound while no node answers, DOWN with "no leader" while one node of three runs, and UP again
 * once the cluster is back, in the same application context.
 */
@Timeout(180)
class FencekeeperHealthRecoveryClusterTest {
  private static final Duration HEALTH_TIMEOUT = Duration.ofSeconds(1);
  // What a check may take beyond its timeout on a loaded 2-core host.
  private static final Duration SCHEDULING_SLACK = Duration.ofMillis(1500);

  @TempDir static Path dataDir;
  static TestCluster cluster;

  @BeforeAll
  static void startCluster() {
    cluster = TestCluster.start(dataDir);
    cluster.awaitLeader();
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  // Guarantee: the indicator answers within its timeout while the cluster is down, tells "no node
  // reachable" from "no leader", and follows the cluster back UP after an outage longer than the
  // client's retry budget (which used to leave it DOWN for good).
  @Test
  void goesDownWithinItsBoundAndRecoversAfterAnOutage() throws InterruptedException {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                FencekeeperAutoConfiguration.class, FencekeeperHealthAutoConfiguration.class))
        .withPropertyValues(
            "fencekeeper.peers=" + cluster.config().toProperties().getProperty("peers"),
            "fencekeeper.cluster-name=" + cluster.config().clusterName(),
            "fencekeeper.request-timeout=1s",
            "fencekeeper.health.timeout=" + HEALTH_TIMEOUT.toMillis() + "ms")
        .run(
            context -> {
              FencekeeperHealthIndicator indicator =
                  context.getBean(FencekeeperHealthIndicator.class);
              await()
                  .atMost(Duration.ofSeconds(30))
                  .until(() -> indicator.health(true).getStatus().equals(Status.UP));
              assertThat(indicator.health(true).getDetails())
                  .containsEntry("state", "LEADER")
                  .containsKey("leader");

              cluster.stopAll();
              // Longer than the client's retry budget (5 x the 1 s request timeout): every per-node
              // request stream the checks opened fails for good meanwhile.
              long outageEnds = System.nanoTime() + Duration.ofSeconds(8).toNanos();
              while (System.nanoTime() < outageEnds) {
                Health down = timedCheck(indicator);
                assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                assertThat(down.getDetails()).containsEntry("state", "UNREACHABLE");
                assertThat(down.getDetails().get("reason").toString()).contains("no node answered");
                Thread.sleep(500);
              }

              List<String> ids =
                  List.copyOf(cluster.config().peers().stream().map(p -> p.id()).toList());
              cluster.startNode(ids.get(0));
              await()
                  .atMost(Duration.ofSeconds(30))
                  .untilAsserted(
                      () ->
                          assertThat(timedCheck(indicator).getDetails())
                              .containsEntry("state", "NO_LEADER"));
              Health noLeader = indicator.health(true);
              assertThat(noLeader.getStatus()).isEqualTo(Status.DOWN);
              assertThat(noLeader.getDetails().get("reason").toString())
                  .contains("1 of 3 nodes answered, none leads");

              cluster.startNode(ids.get(1));
              cluster.startNode(ids.get(2));
              await()
                  .atMost(Duration.ofSeconds(60))
                  .until(() -> indicator.health(true).getStatus().equals(Status.UP));
              assertThat(indicator.health(true).getDetails()).containsEntry("state", "LEADER");
            });
  }

  /** One check, which must answer within the timeout and the slack. */
  private static Health timedCheck(FencekeeperHealthIndicator indicator) {
    long start = System.nanoTime();
    Health health = indicator.health(true);
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertThat(took).isLessThan(HEALTH_TIMEOUT.plus(SCHEDULING_SLACK));
    return health;
  }
}
