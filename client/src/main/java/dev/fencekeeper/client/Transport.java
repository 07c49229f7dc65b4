package dev.fencekeeper.client;

/** How a {@link FencingClient} reaches the cluster ({@link FencingClient.Builder#transport}). */
public enum Transport {
  /**
   * fencekeeper's own client protocol on each node's client port (docs/protocol.md): commands go to
   * the leader, following its redirects, and one session stream per client renews every lease it
   * holds with one log entry per keep-alive and carries their events back.
   */
  CLIENT_PROTOCOL,
  /**
   * Ratis's client on the nodes' Raft ports: every lease renews itself with its own command and
   * follows its own events with a long-poll. Kept for comparison and for clusters whose client
   * ports cannot be reached.
   */
  RATIS
}
