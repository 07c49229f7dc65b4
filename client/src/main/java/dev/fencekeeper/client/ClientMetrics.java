package dev.fencekeeper.client;

import com.codahale.metrics.Counter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicy;

/**
 * What one {@link FencingClient} observes: request latency by command, transport retries, leader
 * redirects and leases lost. Dropwizard metrics in a registry the application can report with its
 * own reporter (JMX, Prometheus bridge, ...): {@code fencekeeper.client.request.<COMMAND>.seconds},
 * {@code fencekeeper.client.retries}, {@code fencekeeper.client.leader.redirects}, {@code
 * fencekeeper.client.leases.lost}.
 */
public final class ClientMetrics {
  private final MetricRegistry registry;
  private final Map<String, Timer> latency = new HashMap<>();
  private final Counter retries;
  private final Counter redirects;
  private final Counter leasesLost;
  private final AtomicReference<RaftPeerId> lastLeader = new AtomicReference<>();

  /** Metrics in {@code into}, or in a registry of their own when it is null. */
  ClientMetrics(MetricRegistry into) {
    this.registry = into != null ? into : new MetricRegistry();
    this.retries = this.registry.counter("fencekeeper.client.retries");
    this.redirects = this.registry.counter("fencekeeper.client.leader.redirects");
    this.leasesLost = this.registry.counter("fencekeeper.client.leases.lost");
    for (Rpc<?> rpc : Rpc.ALL) {
      latency.put(rpc.name, timer(rpc.name));
    }
    latency.put(Rpc.SESSION_KEEP_ALIVE, timer(Rpc.SESSION_KEEP_ALIVE));
  }

  private Timer timer(String command) {
    return registry.timer("fencekeeper.client.request." + command + ".seconds");
  }

  /** The registry holding these metrics. */
  public MetricRegistry registry() {
    return registry;
  }

  <T> CompletableFuture<T> timed(String command, CompletableFuture<T> call) {
    Timer timer = latency.get(command);
    if (timer == null) {
      return call;
    }
    Timer.Context context = timer.time();
    return call.whenComplete((r, e) -> context.stop());
  }

  /** Counts every failed attempt the Ratis client retries, whatever the wrapped policy decides. */
  RetryPolicy counting(RetryPolicy policy) {
    return event -> {
      RetryPolicy.Action action = policy.handleAttemptFailure(event);
      if (action.shouldRetry()) {
        retries.inc();
      }
      return action;
    };
  }

  /** A redirect is an answer from a leader other than the one that answered before. */
  void answeredBy(RaftPeerId leader) {
    if (leader == null) {
      return;
    }
    RaftPeerId previous = lastLeader.getAndSet(leader);
    if (previous != null && !previous.equals(leader)) {
      redirects.inc();
    }
  }

  /** A session keep-alive answered after {@code nanos}: the {@code RENEW_SESSION} latency. */
  void keepAliveAnswered(long nanos) {
    latency.get(Rpc.SESSION_KEEP_ALIVE).update(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  /** One failed attempt the client-protocol transport retries. */
  void retried() {
    retries.inc();
  }

  /** A NOT_LEADER answer the client-protocol transport followed to another node. */
  void redirected() {
    redirects.inc();
  }

  void leaseLost() {
    leasesLost.inc();
  }
}
