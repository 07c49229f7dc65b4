package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.Durations;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.NodeInfo;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Asks every member what it knows about itself, all at once, so a dead node costs one timeout, not
 * three.
 */
final class ClusterProbe {
  static final String LEADER_ROLE = "LEADER";

  /**
   * One member's answer; {@code info} is null when it did not answer in time. {@code refused}: the
   * TLS handshake with it failed on a certificate (this client's or the node's), so no request
   * reached it.
   */
  record NodeStatus(PeerAddress peer, NodeInfo info, String error, boolean refused) {
    NodeStatus(PeerAddress peer, NodeInfo info, String error) {
      this(peer, info, error, false);
    }

    boolean reachable() {
      return info != null;
    }

    boolean isLeader() {
      return reachable() && LEADER_ROLE.equals(info.getRole());
    }
  }

  private ClusterProbe() {}

  /** How one node is asked about itself. */
  @FunctionalInterface
  interface Asker {
    NodeInfo ask(String peerId, Duration timeout);
  }

  static List<NodeStatus> probe(
      FencingClient client, ClusterConfig cluster, Duration timeoutPerNode) {
    return probe((id, t) -> Wire.nodeInfo(client, id, t), cluster, timeoutPerNode);
  }

  /** Every member asked over its own client port, all at once, by the admin connection. */
  static List<NodeStatus> probe(
      FencingAdmin admin, ClusterConfig cluster, Duration timeoutPerNode) {
    return probe((id, t) -> Wire.nodeInfo(admin, id, t), cluster, timeoutPerNode);
  }

  private static List<NodeStatus> probe(
      Asker asker, ClusterConfig cluster, Duration timeoutPerNode) {
    // Named by its Raft members, each node is shown by them; named by client endpoints only, by
    // those, with the id the node gives when it answers.
    boolean byEndpoints = cluster.peers().isEmpty();
    List<PeerAddress> peers = byEndpoints ? cluster.clientAddresses() : cluster.peers();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            peers.size(),
            r -> {
              Thread t = new Thread(r, "fencekeeper-probe");
              t.setDaemon(true);
              return t;
            });
    try {
      List<CompletableFuture<NodeStatus>> answers =
          peers.stream()
              .map(
                  peer ->
                      // Bounded here as well as in the call: opening a connection to a node that
                      // accepts it and then says nothing may hold the asking thread past the
                      // call's own timeout.
                      CompletableFuture.supplyAsync(
                              () -> ask(asker, peer, timeoutPerNode, byEndpoints), pool)
                          .completeOnTimeout(
                              new NodeStatus(peer, null, silence(timeoutPerNode)),
                              timeoutPerNode.toMillis(),
                              TimeUnit.MILLISECONDS))
              .toList();
      return answers.stream().map(CompletableFuture::join).toList();
    } finally {
      pool.shutdownNow();
    }
  }

  private static NodeStatus ask(
      Asker asker, PeerAddress peer, Duration timeout, boolean byEndpoints) {
    try {
      NodeInfo info = asker.ask(peer.id(), timeout);
      boolean assignedId = byEndpoints && !info.getId().isEmpty();
      return new NodeStatus(
          assignedId ? new PeerAddress(info.getId(), peer.host(), peer.port()) : peer, info, null);
    } catch (RuntimeException e) {
      return new NodeStatus(peer, null, reason(e, timeout), handshakeRefused(e));
    }
  }

  /**
   * Whether {@code failure} is the client's answer to a refused TLS handshake: {@code
   * PERMISSION_DENIED} before any request was sent (a call that reached a node is answered by it).
   */
  private static boolean handshakeRefused(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof dev.fencekeeper.client.FencingException f
          && f.code() == dev.fencekeeper.client.ResultCode.PERMISSION_DENIED) {
        return true;
      }
    }
    return false;
  }

  private static String silence(Duration timeout) {
    return "no answer within " + Durations.format(timeout);
  }

  /**
   * Why a node did not answer, in words: the time it was given when that ran out, else the deepest
   * cause's message (a refused connection, a TLS handshake the node turned down, ...).
   */
  static String reason(Throwable failure, Duration timeout) {
    Throwable deepest = failure;
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof TimeoutException) {
        return silence(timeout);
      }
      deepest = t;
    }
    String message = deepest.getMessage();
    return message == null || message.isBlank()
        ? deepest.getClass().getSimpleName()
        : deepest.getClass().getSimpleName() + ": " + message;
  }

  /**
   * The member that says it leads. Right after an election a deposed leader may not know it yet;
   * the one with the higher term is the real one.
   */
  static Optional<NodeStatus> leader(List<NodeStatus> nodes) {
    return nodes.stream()
        .filter(NodeStatus::isLeader)
        .max(Comparator.comparingLong(n -> n.info().getTerm()));
  }
}
