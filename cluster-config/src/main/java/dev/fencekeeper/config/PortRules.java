package dev.fencekeeper.config;

import java.util.List;

/**
 * Where a node's own listeners may go: the default client and gateway ports derived from a peer's
 * Raft port, and the rule that none of a node's metrics, client and gateway ports is a Raft port on
 * its host or another of its listeners. Two listeners on one host:port would fail at start-up;
 * these checks fail at configuration time, naming the key.
 */
final class PortRules {
  private PortRules() {}

  /** The client port {@code peer} has by the default rule. */
  static int defaultClientPort(PeerAddress peer) {
    int port = peer.port() + ClusterConfig.CLIENT_PORT_OFFSET;
    if (port > 65535) {
      throw new ConfigException(
          Keys.CLIENT_PORT
              + ": peer "
              + peer
              + " has no default client port (Raft port + "
              + ClusterConfig.CLIENT_PORT_OFFSET
              + " > 65535); give its Raft port a lower number, or its client port explicitly");
    }
    return port;
  }

  /**
   * Checks the listeners of member {@code self}: metrics ({@code 0}: off), client, and gateway
   * ({@code 0}: off) ports, in that order.
   */
  static void check(
      PeerAddress self, List<PeerAddress> peers, int metricsPort, int clientPort, int httpPort) {
    if (metricsPort != 0) {
      notARaftPort(Keys.METRICS_PORT, metricsPort, self, peers);
    }
    notARaftPort(Keys.CLIENT_PORT, clientPort, self, peers);
    notTaken(Keys.CLIENT_PORT, clientPort, Keys.METRICS_PORT, metricsPort);
    if (httpPort != 0) {
      notARaftPort(Keys.HTTP_PORT, httpPort, self, peers);
      notTaken(Keys.HTTP_PORT, httpPort, Keys.METRICS_PORT, metricsPort);
      notTaken(Keys.HTTP_PORT, httpPort, Keys.CLIENT_PORT, clientPort);
    }
  }

  private static void notARaftPort(
      ConfigKey<?> key, int port, PeerAddress self, List<PeerAddress> peers) {
    for (PeerAddress peer : peers) {
      if (peer.port() == port && peer.host().equalsIgnoreCase(self.host())) {
        throw new ConfigException(
            key
                + ": '"
                + port
                + "' is already the Raft port of peer "
                + peer.id()
                + " ("
                + peer.address()
                + ")");
      }
    }
  }

  private static void notTaken(ConfigKey<?> key, int port, ConfigKey<?> other, int otherPort) {
    if (port == otherPort) {
      throw new ConfigException(key + ": '" + port + "' is already " + other);
    }
  }
}
