package dev.fencekeeper.core;

import static dev.fencekeeper.core.Harness.T0;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The test-only broken build really is broken (so a drill run against it must fail), and only when
 * asked: the same seed scenario is rejected by a normal state.
 */
class UnsafeSkipFencingCheckTest {

  private static Outcome seedScenario(Harness h) {
    long a = h.acquire(T0, "report", "A", 1_000).token();
    h.acquire(T0 + 2_000, "report", "B", 1_000);
    h.put(T0 + 2_100, "report", h.state.lastIssuedToken(), "day", "from B");
    return h.put(T0 + 2_200, "report", a, "day", "from A, stale");
  }

  @Test
  void aNormalStateRejectsTheStaleWrite() {
    assertThat(seedScenario(new Harness()).code()).isEqualTo(Code.STALE_TOKEN);
  }

  @Test
  void theUnsafeSwitchAcceptsTheStaleWrite() {
    Harness h = new Harness();
    h.state.skipFencingCheckUnsafely();
    assertThat(seedScenario(h).code()).isEqualTo(Code.ACCEPTED);
  }

  @Test
  void theUnsafeSwitchAcceptsAWriteOfAnEndedLease() {
    Harness h = new Harness();
    h.state.skipFencingCheckUnsafely();
    long a = h.acquire(T0, "report", "A", 1_000).token();
    assertThat(h.put(T0 + 5_000, "report", a, "day", "late").code()).isEqualTo(Code.ACCEPTED);
  }
}
