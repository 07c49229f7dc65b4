package dev.fencekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.codahale.metrics.MetricRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The client's metrics read through fencekeeper's own types, and the deprecated registry. */
class ClientMetricsTest {

  // Guarantee: counts and latency quantiles are readable without any metrics library type.
  @Test
  void figuresAreReadThroughTypedAccessors() {
    ClientMetrics m = new ClientMetrics(null);
    m.retried();
    m.retried();
    m.redirected();
    m.leaseLost();
    for (int ms = 1; ms <= 100; ms++) {
      m.keepAliveAnswered(Duration.ofMillis(ms).toNanos());
    }
    assertThat(m.retries()).isEqualTo(2);
    assertThat(m.leaderRedirects()).isEqualTo(1);
    assertThat(m.leasesLost()).isEqualTo(1);
    ClientMetrics.RequestStats renew = m.requests("RENEW_SESSION");
    assertThat(renew.count()).isEqualTo(100);
    assertThat(renew.median()).isEqualTo(Duration.ofMillis(50));
    assertThat(renew.p99()).isEqualTo(Duration.ofMillis(99));
    assertThat(renew.p999()).isEqualTo(Duration.ofMillis(100));
    assertThat(m.requests()).containsKey("WRITE").containsEntry("RENEW_SESSION", renew);
    assertThat(m.requests("WRITE"))
        .isEqualTo(new ClientMetrics.RequestStats(0, Duration.ZERO, Duration.ZERO, Duration.ZERO));
    assertThatThrownBy(() -> m.requests("NO_SUCH"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'NO_SUCH'");
  }

  // Guarantee: quantiles describe the most recent requests, not every request since the start.
  @Test
  void latencyIsOfRecentRequests() {
    ClientMetrics m = new ClientMetrics(null);
    for (int i = 0; i < ClientMetrics.LATENCY_WINDOW; i++) {
      m.keepAliveAnswered(Duration.ofSeconds(5).toNanos());
    }
    for (int i = 0; i < ClientMetrics.LATENCY_WINDOW; i++) {
      m.keepAliveAnswered(Duration.ofMillis(2).toNanos());
    }
    ClientMetrics.RequestStats renew = m.requests("RENEW_SESSION");
    assertThat(renew.count()).isEqualTo(2L * ClientMetrics.LATENCY_WINDOW);
    assertThat(renew.p999()).isEqualTo(Duration.ofMillis(2));
  }

  // Guarantee: the deprecated Dropwizard registry (the builder's, or one of its own) still gets
  // every figure under the documented names.
  @Test
  @SuppressWarnings("removal")
  void theDeprecatedRegistryKeepsTheSameFigures() {
    MetricRegistry given = new MetricRegistry();
    ClientMetrics m = new ClientMetrics(given);
    m.retried();
    m.redirected();
    m.leaseLost();
    m.timed(Rpc.WRITE.name, java.util.concurrent.CompletableFuture.completedFuture(1));
    assertThat(m.registry()).isSameAs(given);
    assertThat(given.counter(ClientMetrics.RETRIES).getCount()).isEqualTo(1);
    assertThat(given.counter(ClientMetrics.LEADER_REDIRECTS).getCount()).isEqualTo(1);
    assertThat(given.counter(ClientMetrics.LEASES_LOST).getCount()).isEqualTo(1);
    assertThat(given.timer("fencekeeper.client.request.WRITE.seconds").getCount()).isEqualTo(1);
    assertThat(given.getTimers()).containsKey("fencekeeper.client.request.ACQUIRE.seconds");
    assertThat(new ClientMetrics(null).registry()).isNotNull();
  }
}
