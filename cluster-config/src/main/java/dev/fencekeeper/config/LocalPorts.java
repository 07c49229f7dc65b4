package dev.fencekeeper.config;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for nodes started on this machine (tests, drills, the bench, the class
 * archive's training run): a node binds its Raft port and its client port (Raft port + {@value
 * ClusterConfig#CLIENT_PORT_OFFSET}), so both must be free. "Free" is only true when checked;
 * another process may take a port before the node binds it.
 */
public final class LocalPorts {
  private LocalPorts() {}

  /** A loopback port that is free, and whose client port is free too. */
  public static int freeNodePort() {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = freePort();
      int client = port + ClusterConfig.CLIENT_PORT_OFFSET;
      if (client <= 65535 && isFree(client)) {
        return port;
      }
    }
    throw new IllegalStateException(
        "no free loopback port with a free client port after 200 tries");
  }

  /**
   * A base port for {@code nodes} consecutive Raft ports whose client ports, and whose ports at
   * each of {@code offsets} (e.g. {@code up}'s metrics ports at +100), are all free.
   */
  public static int freeBasePort(int nodes, int... offsets) {
    for (int attempt = 0; attempt < 200; attempt++) {
      int base = ThreadLocalRandom.current().nextInt(20_000, 40_000);
      boolean free = true;
      for (int i = 0; i < nodes && free; i++) {
        free = isFree(base + i) && isFree(base + i + ClusterConfig.CLIENT_PORT_OFFSET);
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
    try (ServerSocket socket = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
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
