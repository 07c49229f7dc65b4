package dev.fencekeeper.spring.health;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.NodeStatus;
import dev.fencekeeper.config.Durations;
import dev.fencekeeper.config.PeerAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Asks every node what it is, all at once, and reports whether one leads. The whole check takes at
 * most the timeout (plus scheduling), however many nodes are down, and ends early once a leader has
 * answered. A node whose previous answer is still outstanding is not asked again, so a check
 * repeated during an outage never piles up waiting calls.
 *
 * <p>Each check asks the client afresh; the client replaces a per-node connection that an outage
 * has broken, so the check follows the cluster back up.
 */
public final class ClusterHealthCheck implements AutoCloseable {
  // How long past the timeout the check still waits for a node's own timeout to fire.
  private static final Duration SLACK = Duration.ofMillis(250);

  private final FencingClient client;
  private final Duration timeout;
  private final ExecutorService askers;
  private final Map<String, CompletableFuture<NodeStatus>> inFlight = new ConcurrentHashMap<>();

  public ClusterHealthCheck(FencingClient client, Duration timeout) {
    this.client = Objects.requireNonNull(client, "client");
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("fencekeeper.health.timeout must be positive: " + timeout);
    }
    this.timeout = timeout;
    AtomicInteger threads = new AtomicInteger();
    this.askers =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "fencekeeper-health-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
  }

  public Duration timeout() {
    return timeout;
  }

  /** One check; never throws for an unreachable or leaderless cluster. */
  public ClusterHealth check() {
    // Where the client connects: its endpoints, or its peers' client ports.
    List<PeerAddress> peers = client.config().clientAddresses();
    Map<String, CompletableFuture<NodeStatus>> asked = new LinkedHashMap<>();
    for (PeerAddress peer : peers) {
      asked.put(peer.id(), ask(peer.id()));
    }
    CompletableFuture<Object> leaderAnswered = new CompletableFuture<>();
    asked
        .values()
        .forEach(
            f ->
                f.thenAccept(
                    s -> {
                      if (s.isLeader()) {
                        leaderAnswered.complete(s);
                      }
                    }));
    CompletableFuture<Void> allAnswered =
        CompletableFuture.allOf(asked.values().toArray(CompletableFuture[]::new));
    try {
      CompletableFuture.anyOf(leaderAnswered, allAnswered)
          .get(timeout.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      // Some node failed or is still silent: the per-node results below say which.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }

    Map<String, String> nodes = new LinkedHashMap<>();
    NodeStatus leader = null;
    int answered = 0;
    for (PeerAddress peer : peers) {
      CompletableFuture<NodeStatus> f = asked.get(peer.id());
      if (!f.isDone()) {
        nodes.put(
            peer.id(),
            "no answer within " + Durations.format(timeout) + " (" + peer.address() + ")");
        continue;
      }
      try {
        NodeStatus s = f.join();
        answered++;
        nodes.put(peer.id(), s.role() + " term " + s.term());
        if (s.isLeader() && leader == null) {
          leader = s;
        }
      } catch (RuntimeException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        nodes.put(peer.id(), "unreachable at " + peer.address() + ": " + cause.getMessage());
      }
    }
    if (leader != null) {
      return new ClusterHealth(
          ClusterHealth.State.LEADER, leader.id(), leader.address(), leader.term(), nodes, null);
    }
    if (answered > 0) {
      return new ClusterHealth(
          ClusterHealth.State.NO_LEADER,
          null,
          null,
          0,
          nodes,
          answered
              + " of "
              + peers.size()
              + " nodes answered, none leads: an election is under way or too few nodes run for a"
              + " quorum");
    }
    return new ClusterHealth(
        ClusterHealth.State.UNREACHABLE,
        null,
        null,
        0,
        nodes,
        "no node answered within "
            + Durations.format(timeout)
            + ": the cluster is down or unreachable from here");
  }

  /** The node's answer, or the call already asking it if the previous check left one running. */
  private CompletableFuture<NodeStatus> ask(String id) {
    return inFlight.compute(
        id,
        (key, previous) -> {
          if (previous != null && !previous.isDone()) {
            return previous;
          }
          CompletableFuture<NodeStatus> f =
              CompletableFuture.supplyAsync(() -> client.nodeStatus(key, timeout), askers);
          return f;
        });
  }

  @Override
  public void close() {
    askers.shutdownNow();
  }
}
