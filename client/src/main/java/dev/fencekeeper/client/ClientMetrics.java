package dev.fencekeeper.client;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one {@link FencingClient} observes: request latency by command, transport retries, leader
 * redirects and leases lost, read through this class's own methods ({@link #requests()}, {@link
 * #retries()}, {@link #leaderRedirects()}, {@link #leasesLost()}), which need no metrics library.
 *
 * <p>When Dropwizard's {@code io.dropwizard.metrics:metrics-core} is on the class path (the client
 * declares it optional), the same figures are also kept in a {@code MetricRegistry} ({@link
 * #registry()}, or the builder's {@link FencingClient.Builder#metricRegistry}) under the names
 * {@code fencekeeper.client.request.<COMMAND>.seconds}, {@value #RETRIES}, {@value
 * #LEADER_REDIRECTS} and {@value #LEASES_LOST}.
 */
public final class ClientMetrics {
  /** The name of {@link #retries()} wherever the client's metrics are exported. */
  public static final String RETRIES = "fencekeeper.client.retries";

  /** The name of {@link #leaderRedirects()} wherever the client's metrics are exported. */
  public static final String LEADER_REDIRECTS = "fencekeeper.client.leader.redirects";

  /** The name of {@link #leasesLost()} wherever the client's metrics are exported. */
  public static final String LEASES_LOST = "fencekeeper.client.leases.lost";

  // The latency quantiles are those of this many most recent requests of a command.
  static final int LATENCY_WINDOW = 1028;

  // By command name (Rpc's), in the order Rpc lists the calls.
  private final Map<String, Latency> latency = new LinkedHashMap<>();
  private final LongAdder retries = new LongAdder();
  private final LongAdder redirects = new LongAdder();
  private final LongAdder leasesLost = new LongAdder();
  // Null without metrics-core; typed Object so that this class never loads a Dropwizard type.
  private final Object dropwizard;

  /**
   * Metrics of their own, also kept in {@code into} (a Dropwizard {@code MetricRegistry}) when it
   * is not null, or in a registry of their own when metrics-core is on the class path.
   */
  ClientMetrics(Object into) {
    for (Rpc<?> rpc : Rpc.ALL) {
      latency.put(rpc.name, new Latency());
    }
    latency.put(Rpc.SESSION_KEEP_ALIVE, new Latency());
    this.dropwizard =
        into != null || DropwizardMetrics.available()
            ? new DropwizardMetrics(into, List.copyOf(latency.keySet()))
            : null;
  }

  /**
   * Requests sent so far and their recent latency, by command ({@code ACQUIRE}, {@code WRITE},
   * ...), every command the client can send, in a fixed order.
   */
  public Map<String, RequestStats> requests() {
    Map<String, RequestStats> stats = new LinkedHashMap<>();
    latency.forEach((command, l) -> stats.put(command, l.stats()));
    return Collections.unmodifiableMap(stats);
  }

  /**
   * Requests of {@code command} ({@code ACQUIRE}, {@code WRITE}, ..., a key of {@link #requests()})
   * sent so far and their recent latency.
   *
   * @throws IllegalArgumentException for a command the client does not send
   */
  public RequestStats requests(String command) {
    Latency l = latency.get(command);
    if (l != null) {
      return l.stats();
    }
    throw new IllegalArgumentException(
        "no command '" + command + "'; one of " + requests().keySet());
  }

  /** Failed attempts the client retried (on another node, or after a pause). */
  public long retries() {
    return retries.sum();
  }

  /** NOT_LEADER answers the client followed to another node. */
  public long leaderRedirects() {
    return redirects.sum();
  }

  /** Leases this client lost (expired or revoked before it released them). */
  public long leasesLost() {
    return leasesLost.sum();
  }

  /**
   * The Dropwizard registry holding these metrics: the builder's {@link
   * FencingClient.Builder#metricRegistry}, or one of the client's own.
   *
   * @deprecated a third-party type in the client's API; read the figures through {@link
   *     #requests()}, {@link #retries()}, {@link #leaderRedirects()} and {@link #leasesLost()}.
   *     Kept for this release; works only with {@code io.dropwizard.metrics:metrics-core} on the
   *     class path, which the client no longer brings.
   * @throws IllegalStateException without metrics-core on the class path
   */
  @Deprecated(since = "0.1.0", forRemoval = true)
  public com.codahale.metrics.MetricRegistry registry() {
    if (dropwizard == null) {
      throw new IllegalStateException(
          "ClientMetrics.registry() needs io.dropwizard.metrics:metrics-core on the class path;"
              + " read requests(), retries(), leaderRedirects() and leasesLost() instead");
    }
    return ((DropwizardMetrics) dropwizard).registry();
  }

  /**
   * Requests of one command: how many were sent, and quantiles of the latency of the most recent
   * ones (up to 1,028); zero durations before the first.
   *
   * @param count requests sent since the client was built
   * @param median the median latency
   * @param p99 the 99th percentile
   * @param p999 the 99.9th percentile
   */
  public record RequestStats(long count, Duration median, Duration p99, Duration p999) {}

  <T> CompletableFuture<T> timed(String command, CompletableFuture<T> call) {
    if (!latency.containsKey(command)) {
      return call;
    }
    long start = System.nanoTime();
    return call.whenComplete((r, e) -> record(command, System.nanoTime() - start));
  }

  /** A session keep-alive answered after {@code nanos}: the {@code RENEW_SESSION} latency. */
  void keepAliveAnswered(long nanos) {
    record(Rpc.SESSION_KEEP_ALIVE, nanos);
  }

  private void record(String command, long nanos) {
    latency.get(command).record(nanos);
    if (dropwizard != null) {
      ((DropwizardMetrics) dropwizard).requestTook(command, nanos);
    }
  }

  /** One failed attempt the client-protocol transport retries. */
  void retried() {
    retries.increment();
    if (dropwizard != null) {
      ((DropwizardMetrics) dropwizard).count(RETRIES);
    }
  }

  /** A NOT_LEADER answer the client-protocol transport followed to another node. */
  void redirected() {
    redirects.increment();
    if (dropwizard != null) {
      ((DropwizardMetrics) dropwizard).count(LEADER_REDIRECTS);
    }
  }

  void leaseLost() {
    leasesLost.increment();
    if (dropwizard != null) {
      ((DropwizardMetrics) dropwizard).count(LEASES_LOST);
    }
  }

  /** A count and the latest {@value #LATENCY_WINDOW} latencies of one command. */
  private static final class Latency {
    private final long[] window = new long[LATENCY_WINDOW];
    private long count;

    synchronized void record(long nanos) {
      window[(int) (count % LATENCY_WINDOW)] = Math.max(0, nanos);
      count++;
    }

    RequestStats stats() {
      long n;
      long[] sorted;
      synchronized (this) {
        n = count;
        sorted = Arrays.copyOf(window, (int) Math.min(n, LATENCY_WINDOW));
      }
      Arrays.sort(sorted);
      return new RequestStats(
          n, quantile(sorted, 0.5), quantile(sorted, 0.99), quantile(sorted, 0.999));
    }

    private static Duration quantile(long[] sorted, double q) {
      if (sorted.length == 0) {
        return Duration.ZERO;
      }
      int index = (int) Math.ceil(q * sorted.length) - 1;
      return Duration.ofNanos(sorted[Math.max(0, Math.min(sorted.length - 1, index))]);
    }
  }
}
