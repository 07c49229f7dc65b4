package dev.fencekeeper.config;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for nodes started on this machine (tests, drills, the bench, the class
 * archive's training run): a node binds its Raft port, its client port (Raft port + {@value
 * ClusterConfig#CLIENT_PORT_OFFSET}) and its JSON gateway port (Raft port + {@value
 * ClusterConfig#HTTP_PORT_OFFSET}), so all three must be free. "Free" is only true when checked;
 * another process may take a port before the node binds it.
 */
public final class LocalPorts {
  // Ports are drawn below 32768, where Linux (ip_local_port_range 32768-60999) and other systems
  // (49152 and up) never hand one to an outgoing connection: a port from the ephemeral range that
  // was free when checked can be taken by any connection before the node binds it, and the node
  // then fails to start.
  private static final int LOWEST = 10_000;
  private static final int BELOW_EPHEMERAL = 32_768;

  private LocalPorts() {}

  /** A loopback port that is free, and whose client and gateway ports are free too. */
  public static int freeNodePort() {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = randomPort(ClusterConfig.HTTP_PORT_OFFSET);
      if (isFree(port)
          && isFree(port + ClusterConfig.CLIENT_PORT_OFFSET)
          && isFree(port + ClusterConfig.HTTP_PORT_OFFSET)) {
        return port;
      }
    }
    throw new IllegalStateException(
        "no free loopback port with free client and gateway ports after 200 tries");
  }

  /**
   * A base port for {@code nodes} consecutive Raft ports whose client and gateway ports, and whose
   * ports at each of {@code offsets} (e.g. {@code up}'s metrics ports at +100), are all free.
   */
  public static int freeBasePort(int nodes, int... offsets) {
    for (int attempt = 0; attempt < 200; attempt++) {
      int highestOffset = ClusterConfig.HTTP_PORT_OFFSET;
      for (int offset : offsets) {
        highestOffset = Math.max(highestOffset, offset);
      }
      int base = randomPort(nodes - 1 + highestOffset);
      boolean free = true;
      for (int i = 0; i < nodes && free; i++) {
        free =
            isFree(base + i)
                && isFree(base + i + ClusterConfig.CLIENT_PORT_OFFSET)
                && isFree(base + i + ClusterConfig.HTTP_PORT_OFFSET);
        for (int offset : offsets) {
          free = free && isFree(base + i + offset);
        }
      }
      if (free) {
        return base;
      }
    }
    throw new IllegalStateException("no " + nodes + " consecutive free loopback ports found");
  }

  /** A loopback port nothing listens on now. */
  public static int freePort() {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = randomPort(0);
      if (isFree(port)) {
        return port;
      }
    }
    throw new IllegalStateException("no free loopback port after 200 tries");
  }

  /** A port below the ephemeral range that leaves room for {@code above} more ports over it. */
  private static int randomPort(int above) {
    return ThreadLocalRandom.current().nextInt(LOWEST, BELOW_EPHEMERAL - above);
  }

  /**
   * Whether {@code port} can be bound on every interface now (TIME_WAIT leftovers do not count).
   */
  public static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
