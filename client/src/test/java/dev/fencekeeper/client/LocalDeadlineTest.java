package dev.fencekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The local deadline a lease counts from a send ends before the cluster's can. */
class LocalDeadlineTest {
  // Guarantee: a TTL counted on this client's clock is the TTL less at least 1,000 ppm of it: the
  // cluster's time line may run 500 ppm fast while it slews, on a leader clock NTP may slew 500 ppm
  // against this one, and the client's view must end first.
  @Test
  void theLocalTtlLeavesTheDriftMargin() {
    for (Duration ttl :
        List.of(Duration.ofMillis(600), Duration.ofSeconds(10), Duration.ofMinutes(30))) {
      long margin = ttl.toNanos() / 1_000;
      assertThat(Lease.localTtlNanos(ttl))
          .as("ttl %s", ttl)
          .isLessThanOrEqualTo(ttl.toNanos() - margin);
      assertThat(Lease.localTtlNanos(ttl))
          .as("ttl %s", ttl)
          .isGreaterThan(ttl.toNanos() * 99 / 100);
    }
  }
}
