package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which addresses a node's sockets listen on, read from the kernel's own socket tables ({@code
 * /proc/net/tcp} and {@code tcp6}), so the answer does not depend on which interfaces this host
 * happens to have.
 */
@Timeout(120)
class ListenAddressTest {
  @TempDir Path dataDir;

  // Guarantee: by default the Raft port and the metrics port listen only on the node's own host
  // from `peers` (here 127.0.0.1), never on every interface.
  @Test
  void listensOnlyOnItsOwnHostByDefault() throws Exception {
    int raftPort = LocalPorts.freeNodePort();
    int metricsPort = LocalPorts.freeNodePort();
    try (FencekeeperServer node =
        FencekeeperServer.start(singleNode(raftPort, metricsPort, new Properties()))) {
      assertThat(listeningAddresses(raftPort)).containsExactly("127.0.0.1");
      assertThat(listeningAddresses(metricsPort)).containsExactly("127.0.0.1");
    }
  }

  // Guarantee: `bind=0.0.0.0` is how an operator opens the Raft port on every interface; the
  // metrics port follows it unless `metrics.bind` says otherwise.
  @Test
  void explicitBindKeysChooseTheAddresses() throws Exception {
    int raftPort = LocalPorts.freeNodePort();
    int metricsPort = LocalPorts.freeNodePort();
    Properties everywhere = new Properties();
    everywhere.setProperty("bind", "0.0.0.0");
    try (FencekeeperServer node =
        FencekeeperServer.start(singleNode(raftPort, metricsPort, everywhere))) {
      assertThat(listeningAddresses(raftPort)).containsExactly("*");
      assertThat(listeningAddresses(metricsPort)).containsExactly("*");
    }
    Properties metricsOnly = new Properties();
    metricsOnly.setProperty("metrics.bind", "0.0.0.0");
    try (FencekeeperServer node =
        FencekeeperServer.start(singleNode(raftPort, metricsPort, metricsOnly))) {
      assertThat(listeningAddresses(raftPort)).containsExactly("127.0.0.1");
      assertThat(listeningAddresses(metricsPort)).containsExactly("*");
    }
  }

  private ClusterConfig singleNode(int raftPort, int metricsPort, Properties extra) {
    Properties p = new Properties();
    p.setProperty("cluster.name", "listen-" + raftPort);
    p.setProperty("peers", "n1@127.0.0.1:" + raftPort);
    p.setProperty("node.id", "n1");
    p.setProperty("storage.dir", dataDir.resolve("n1-" + System.nanoTime()).toString());
    p.setProperty("metrics.port", Integer.toString(metricsPort));
    p.putAll(extra);
    return ClusterConfig.fromProperties(p);
  }

  /**
   * The local addresses of the sockets in LISTEN state on {@code port}: dotted IPv4 (IPv4-mapped
   * IPv6 included), a compressed IPv6 literal, or {@code *} for the wildcard of either family.
   */
  static Set<String> listeningAddresses(int port) throws IOException {
    Set<String> addresses = new TreeSet<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      Path file = Path.of(table);
      if (!Files.exists(file)) {
        continue;
      }
      List<String> lines = Files.readAllLines(file);
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.trim().split("\\s+");
        String[] local = f[1].split(":");
        if (!"0A".equals(f[3]) || Integer.parseInt(local[1], 16) != port) {
          continue;
        }
        addresses.add(describe(local[0]));
      }
    }
    return addresses;
  }

  /** The kernel prints each 32-bit word of an address in host (little-endian) byte order. */
  private static String describe(String hex) throws UnknownHostException {
    byte[] bytes = new byte[hex.length() / 2];
    for (int word = 0; word < bytes.length / 4; word++) {
      for (int b = 0; b < 4; b++) {
        int at = word * 8 + (3 - b) * 2;
        bytes[word * 4 + b] = (byte) Integer.parseInt(hex.substring(at, at + 2), 16);
      }
    }
    InetAddress address = InetAddress.getByAddress(bytes); // maps ::ffff:a.b.c.d to Inet4Address
    return address.isAnyLocalAddress() ? "*" : address.getHostAddress();
  }
}
