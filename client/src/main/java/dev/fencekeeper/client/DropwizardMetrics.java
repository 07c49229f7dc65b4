package dev.fencekeeper.client;

import com.codahale.metrics.MetricRegistry;
import java.util.concurrent.TimeUnit;

/**
 * The client's metrics in a Dropwizard {@link MetricRegistry}, kept beside {@link ClientMetrics}'s
 * own figures for applications that report that registry. Only this class names a Dropwizard type
 * at run time, and it is loaded only when metrics-core is on the class path.
 */
final class DropwizardMetrics {
  private static final String REGISTRY_CLASS = "com.codahale.metrics.MetricRegistry";

  private final MetricRegistry registry;

  /**
   * Metrics in {@code into} (a {@link MetricRegistry}), or in a registry of their own (null), with
   * a timer for each of {@code commands} from the start.
   */
  DropwizardMetrics(Object into, Iterable<String> commands) {
    this.registry = into != null ? (MetricRegistry) into : new MetricRegistry();
    for (String command : commands) {
      registry.timer(timerName(command));
    }
    registry.counter(ClientMetrics.RETRIES);
    registry.counter(ClientMetrics.LEADER_REDIRECTS);
    registry.counter(ClientMetrics.LEASES_LOST);
  }

  /** Whether metrics-core can be loaded by the client's class loader. */
  static boolean available() {
    try {
      Class.forName(REGISTRY_CLASS, false, ClientMetrics.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  MetricRegistry registry() {
    return registry;
  }

  void requestTook(String command, long nanos) {
    registry.timer(timerName(command)).update(nanos, TimeUnit.NANOSECONDS);
  }

  private static String timerName(String command) {
    return "fencekeeper.client.request." + command + ".seconds";
  }

  void count(String name) {
    registry.counter(name).inc();
  }
}
