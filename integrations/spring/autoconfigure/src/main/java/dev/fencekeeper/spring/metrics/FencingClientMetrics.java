package dev.fencekeeper.spring.metrics;

import com.codahale.metrics.Counter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import dev.fencekeeper.client.ClientMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The {@link dev.fencekeeper.client.FencingClient}'s own metrics in Micrometer, read from its
 * registry each time they are scraped:
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
  private static final String TIMER_PREFIX = "fencekeeper.client.request.";
  private static final String TIMER_SUFFIX = ".seconds";
  private static final double[] QUANTILES = {0.5, 0.99, 0.999};

  private final ClientMetrics metrics;

  public FencingClientMetrics(ClientMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    MetricRegistry source = metrics.registry();
    for (Map.Entry<String, Counter> e : source.getCounters().entrySet()) {
      FunctionCounter.builder(e.getKey(), e.getValue(), Counter::getCount)
          .description("fencekeeper client: " + e.getKey())
          .register(registry);
    }
    for (Map.Entry<String, Timer> e : source.getTimers().entrySet()) {
      String name = e.getKey();
      if (!name.startsWith(TIMER_PREFIX) || !name.endsWith(TIMER_SUFFIX)) {
        continue;
      }
      String command = name.substring(TIMER_PREFIX.length(), name.length() - TIMER_SUFFIX.length());
      Timer timer = e.getValue();
      FunctionCounter.builder("fencekeeper.client.requests", timer, Timer::getCount)
          .description("requests this client sent")
          .tag("command", command)
          .register(registry);
      for (double q : QUANTILES) {
        Gauge.builder(
                "fencekeeper.client.request.latency",
                timer,
                t -> t.getSnapshot().getValue(q) / TimeUnit.SECONDS.toNanos(1))
            .description("request latency of this client, in seconds")
            .baseUnit("seconds")
            .tag("command", command)
            .tag("quantile", Double.toString(q))
            .register(registry);
      }
    }
  }
}
