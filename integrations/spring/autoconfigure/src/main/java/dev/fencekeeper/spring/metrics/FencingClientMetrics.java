package dev.fencekeeper.spring.metrics;

import dev.fencekeeper.client.ClientMetrics;
import dev.fencekeeper.client.ClientMetrics.RequestStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * The {@link dev.fencekeeper.client.FencingClient}'s own metrics in Micrometer, read from its
 * {@link ClientMetrics} each time they are scraped:
 *
 * <ul>
 *   <li>{@code fencekeeper.client.requests{command}} — requests sent, by command (ACQUIRE, WRITE,
 *       ...);
 *   <li>{@code fencekeeper.client.request.latency{command,quantile}} — seconds, at the 0.5, 0.99
 *       and 0.999 quantiles of the client's recent requests (its own reservoir, not Micrometer's
 *       histogram);
 *   <li>{@code fencekeeper.client.retries}, {@code fencekeeper.client.leader.redirects}, {@code
 *       fencekeeper.client.leases.lost} — counters.
 * </ul>
 */
public class FencingClientMetrics implements MeterBinder {
  private final ClientMetrics metrics;

  public FencingClientMetrics(ClientMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    counter(registry, ClientMetrics.RETRIES, ClientMetrics::retries);
    counter(registry, ClientMetrics.LEADER_REDIRECTS, ClientMetrics::leaderRedirects);
    counter(registry, ClientMetrics.LEASES_LOST, ClientMetrics::leasesLost);
    for (String command : metrics.requests().keySet()) {
      FunctionCounter.builder(
              "fencekeeper.client.requests", metrics, m -> m.requests(command).count())
          .description("requests this client sent")
          .tag("command", command)
          .register(registry);
      quantile(registry, command, "0.5", RequestStats::median);
      quantile(registry, command, "0.99", RequestStats::p99);
      quantile(registry, command, "0.999", RequestStats::p999);
    }
  }

  private void counter(MeterRegistry registry, String name, ToLongFunction<ClientMetrics> count) {
    FunctionCounter.builder(name, metrics, count::applyAsLong)
        .description("fencekeeper client: " + name)
        .register(registry);
  }

  private void quantile(
      MeterRegistry registry,
      String command,
      String quantile,
      Function<RequestStats, Duration> value) {
    Gauge.builder(
            "fencekeeper.client.request.latency",
            metrics,
            m -> value.apply(m.requests(command)).toNanos() / 1e9)
        .description("request latency of this client, in seconds")
        .baseUnit("seconds")
        .tag("command", command)
        .tag("quantile", quantile)
        .register(registry);
  }
}
