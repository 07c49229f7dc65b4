package dev.fencekeeper.config;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for nodes started on this machine (tests, drills, the bench, the class
 * archive's training run): a node binds its Raft port, its client port (Raft port + {@value
 * ClusterConfig#CLIENT_PORT_OFFSET}) and its JSON gateway port (Raft port + {@value
 * ClusterConfig#HTTP_PORT_OFFSET}), so all three must be free.
 *
 * <p>Every port handed out stays reserved for the life of this JVM: neither this JVM nor another
 * process picking through this class gets it again, even while nothing is bound to it. That matters
 * between a pick and the node's bind (a second or so for a node process), and while a drill's or a
 * test's node is down between a kill and its restart: another cluster started on the same machine
 * meanwhile would otherwise take the port, and clients given the first cluster's addresses would
 * reach a node of the second. The reservation is a lock on one byte (at the port's offset) of a
 * lock file in the temporary directory, which the operating system releases when the process ends,
 * however it ends. A process that does not pick through this class is only seen by the bind check,
 * and only once it has bound.
 */
public final class LocalPorts {
  // Ports are drawn below 32768, where Linux (ip_local_port_range 32768-60999) and other systems
  // (49152 and up) never hand one to an outgoing connection.
  private static final int LOWEST = 10_000;
  private static final int BELOW_EPHEMERAL = 32_768;

  /** The reservations this JVM holds; a value is null where the lock file could not be used. */
  private static final Map<Integer, FileLock> RESERVED = new HashMap<>();

  // One channel for every lock: on some systems closing any channel of a file releases all of the
  // process's locks on it.
  private static FileChannel lockFile;
  private static boolean lockFileUnusable;

  private LocalPorts() {}

  /** A loopback port that is free, and whose client and gateway ports are free too. */
  public static int freeNodePort() {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = randomPort(ClusterConfig.HTTP_PORT_OFFSET);
      if (reserveAll(
          port, port + ClusterConfig.CLIENT_PORT_OFFSET, port + ClusterConfig.HTTP_PORT_OFFSET)) {
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
    int highestOffset = ClusterConfig.HTTP_PORT_OFFSET;
    for (int offset : offsets) {
      highestOffset = Math.max(highestOffset, offset);
    }
    for (int attempt = 0; attempt < 200; attempt++) {
      int base = randomPort(nodes - 1 + highestOffset);
      int[] ports = new int[nodes * (3 + offsets.length)];
      int n = 0;
      for (int i = 0; i < nodes; i++) {
        ports[n++] = base + i;
        ports[n++] = base + i + ClusterConfig.CLIENT_PORT_OFFSET;
        ports[n++] = base + i + ClusterConfig.HTTP_PORT_OFFSET;
        for (int offset : offsets) {
          ports[n++] = base + i + offset;
        }
      }
      if (reserveAll(ports)) {
        return base;
      }
    }
    throw new IllegalStateException("no " + nodes + " consecutive free loopback ports found");
  }

  /** A loopback port nothing listens on now. */
  public static int freePort() {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = randomPort(0);
      if (reserveAll(port)) {
        return port;
      }
    }
    throw new IllegalStateException("no free loopback port after 200 tries");
  }

  /**
   * Reserves {@code port} for the life of this JVM if no process holds it through this class and
   * nothing is bound to it now; returns whether it did. Nothing is reserved when it returns false.
   */
  public static boolean reserve(int port) {
    return reserveAll(port);
  }

  /** Reserves every one of {@code ports}, or none of them. */
  private static synchronized boolean reserveAll(int... ports) {
    int[] distinct = Arrays.stream(ports).distinct().toArray();
    for (int i = 0; i < distinct.length; i++) {
      boolean locked = lock(distinct[i]);
      if (!locked || !isFree(distinct[i])) {
        for (int j = 0; j < (locked ? i + 1 : i); j++) {
          unlock(distinct[j]);
        }
        return false;
      }
    }
    return true;
  }

  private static boolean lock(int port) {
    if (RESERVED.containsKey(port)) {
      return false;
    }
    FileChannel channel = lockFile();
    FileLock lock = null;
    if (channel != null) {
      try {
        lock = channel.tryLock(port, 1, false);
      } catch (IOException | OverlappingFileLockException e) {
        lock = null;
      }
      if (lock == null) {
        return false;
      }
    }
    RESERVED.put(port, lock);
    return true;
  }

  private static void unlock(int port) {
    FileLock lock = RESERVED.remove(port);
    if (lock != null) {
      try {
        lock.release();
      } catch (IOException e) {
        // The lock ends with the process at the latest; the port is merely held longer.
      }
    }
  }

  /**
   * The lock file of this user's reservations, or null if it cannot be opened (then only this JVM
   * knows its reservations).
   */
  private static FileChannel lockFile() {
    if (lockFile == null && !lockFileUnusable) {
      String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9_.-]", "_");
      Path file =
          Path.of(System.getProperty("java.io.tmpdir"), "fencekeeper-ports-" + user + ".lock");
      try {
        lockFile =
            FileChannel.open(
                file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
      } catch (IOException | UnsupportedOperationException e) {
        lockFileUnusable = true;
      }
    }
    return lockFile;
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
