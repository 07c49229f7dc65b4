package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class ReadinessTest {
  private final Readiness readiness = new Readiness(3);

  // Guarantee: within the bound of the leader's commit index a node is caught up; one entry more
  // and it is not, with both indexes, the gap and the bound in the reason.
  @Test
  void caughtUpWithinTheBoundOfTheLeadersCommitIndex() {
    assertThat(readiness.behind("n1", OptionalLong.of(100), 100)).isNull();
    assertThat(readiness.behind("n1", OptionalLong.of(100), 97)).isNull();
    assertThat(readiness.behind("n1", OptionalLong.of(100), 96))
        .isEqualTo(
            "applied index 96 is 4 entries behind leader n1's commit index 100"
                + " (health.max-apply-lag 3)");
  }

  // Guarantee: a node that has applied nothing (wiped storage) is never caught up, and one the
  // leader has not yet told its commit index is not either.
  @Test
  void nothingAppliedOrLeaderCommitUnknownIsNotCaughtUp() {
    assertThat(readiness.behind("n2", OptionalLong.of(0), -1))
        .isEqualTo("applied nothing yet (empty or wiped storage); catching up from leader n2");
    assertThat(readiness.behind("n2", OptionalLong.empty(), 40))
        .isEqualTo("applied index 40, leader n2 has not told this node its commit index yet");
  }

  @Test
  void aNegativeBoundIsRefused() {
    assertThatThrownBy(() -> new Readiness(-1)).isInstanceOf(IllegalArgumentException.class);
  }
}
