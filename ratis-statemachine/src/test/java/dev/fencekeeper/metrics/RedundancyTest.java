package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedundancyTest {
  // Guarantee: no lagging follower, no words; otherwise one line naming each lagging follower (and
  // only those) with its lag and the bound.
  @Test
  void namesOnlyTheLaggingFollowersOnOneLine() {
    FollowerLag fine = new FollowerLag("n2", 100, 3, 0.0, false);
    FollowerLag stuck = new FollowerLag("n3", 40, 63, 12.44, true);
    assertThat(Redundancy.degraded(List.of(fine), Duration.ofSeconds(10))).isNull();
    assertThat(Redundancy.degraded(List.of(), Duration.ofSeconds(10))).isNull();

    assertThat(Redundancy.degraded(List.of(fine, stuck), Duration.ofSeconds(10)))
        .isEqualTo(
            "redundancy degraded: follower n3 is 63 entries behind (match index 40) and has not"
                + " advanced for 12.4s (health.max-follower-lag 10s)");
    assertThat(Redundancy.degraded(List.of(stuck, stuck), Duration.ofMillis(1500)))
        .contains("; follower n3")
        .endsWith("(health.max-follower-lag 1.500s)")
        .doesNotContain("\n");
  }
}
