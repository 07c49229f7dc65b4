package dev.fencekeeper.tools;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.config.Security;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The files of the cluster {@code up} runs: {@code DIR/nX.properties} per node, and {@code DIR/nX/}
 * for its Raft storage, {@code node.log} (its output) and {@code logs/} (its rolling log). Reusing
 * the directory is how a restart resumes the same state. Each node serves metrics on its Raft port
 * + 100.
 */
public final class LocalClusterLayout {
  /**
   * A node's metrics port is its Raft port + METRICS_PORT_OFFSET: 7401..7403 for the default 7301.
   */
  public static final int METRICS_PORT_OFFSET = 100;

  /**
   * One node's files; {@code metricsPort} is 0 when its config turns the HTTP endpoint off; {@code
   * clientAddress} is where it serves the client protocol (its Raft port + 200 unless its config
   * says otherwise).
   */
  public record Node(
      PeerAddress peer,
      Path configFile,
      Path storageDir,
      int metricsPort,
      PeerAddress clientAddress) {
    public String id() {
      return peer.id();
    }

    Path logFile() {
      return storageDir.resolve("node.log");
    }

    String metricsUrl() {
      return "http://" + peer.host() + ":" + metricsPort + "/metrics";
    }
  }

  private LocalClusterLayout() {}

  /**
   * Makes sure each node has a config file describing the three-node cluster on {@code basePort}.
   *
   * <p>An existing file is kept when it describes the same node of the same cluster, so hand edits
   * (limits, timeouts) survive restarts. One describing another cluster (other ports, other
   * storage) is rewritten only while its node has no Raft data yet: pointing an existing Raft log
   * at new addresses would leave the stored membership and the config disagreeing, so that case is
   * refused with the way out.
   *
   * @throws ConfigException if a file is unreadable or invalid, or conflicts with existing data
   */
  public static List<Node> prepare(Path dataDir, int basePort) {
    return prepare(dataDir, basePort, Security.none());
  }

  /**
   * As {@link #prepare(Path, int)}, with every node's TLS files and admins set to {@code security}:
   * the flags of this {@code up} decide whether the cluster talks TLS, also in a config file kept
   * from before.
   */
  public static List<Node> prepare(Path dataDir, int basePort, Security security) {
    ClusterConfig cluster = ClusterConfig.local(basePort);
    List<Node> nodes = new ArrayList<>();
    List<PeerAddress> peers = cluster.peers();
    for (int i = 0; i < peers.size(); i++) {
      PeerAddress peer = peers.get(i);
      Path configFile = dataDir.resolve(peer.id() + ".properties");
      Path storageDir = dataDir.resolve(peer.id());
      ClusterConfig wanted =
          cluster
              .withNodeId(peer.id())
              .withStorageDir(storageDir)
              .withMetricsPort(metricsPort(basePort, i + 1))
              .withSecurity(security);
      ClusterConfig used = wanted;
      if (!Files.exists(configFile)) {
        wanted.store(configFile);
      } else {
        ClusterConfig existing = ClusterConfig.load(configFile);
        if (!sameNode(existing, wanted)) {
          if (hasRaftData(storageDir)) {
            throw new ConfigException(conflict(configFile, storageDir, existing, wanted, basePort));
          }
          wanted.store(configFile);
        } else if (!java.util.Objects.equals(existing.security().tls(), security.tls())) {
          Security switched = existing.security().withTls(security.tls());
          if (switched.admins().isEmpty()) {
            switched = switched.withAdmins(security.admins());
          }
          used = existing.withSecurity(switched);
          used.store(configFile);
        } else {
          used = existing; // hand edits, metrics.port included, are the user's choice
        }
      }
      nodes.add(new Node(peer, configFile, storageDir, used.metricsPort(), used.clientAddress()));
    }
    return nodes;
  }

  /** The metrics port {@code up} gives node {@code i} (1-based): its Raft port + 100. */
  public static int metricsPort(int basePort, int i) {
    return basePort + i - 1 + METRICS_PORT_OFFSET;
  }

  private static boolean sameNode(ClusterConfig existing, ClusterConfig wanted) {
    return existing.clusterName().equals(wanted.clusterName())
        && existing.peers().equals(wanted.peers())
        && existing.nodeId().equals(wanted.nodeId())
        && existing
            .storageDir()
            .toAbsolutePath()
            .normalize()
            .equals(wanted.storageDir().toAbsolutePath().normalize());
  }

  /**
   * Ratis keeps each group in a subdirectory of the storage dir named by the group's UUID; node.log
   * and logs/ alone are not data.
   */
  private static boolean hasRaftData(Path storageDir) {
    if (!Files.isDirectory(storageDir)) {
      return false;
    }
    try (Stream<Path> entries = Files.list(storageDir)) {
      return entries.anyMatch(
          p -> Files.isDirectory(p) && isGroupDirName(p.getFileName().toString()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static boolean isGroupDirName(String name) {
    try {
      UUID.fromString(name);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static String conflict(
      Path configFile,
      Path storageDir,
      ClusterConfig existing,
      ClusterConfig wanted,
      int basePort) {
    String existingPeers =
        existing.peers().stream().map(PeerAddress::toString).collect(Collectors.joining(","));
    StringBuilder message =
        new StringBuilder()
            .append(configFile)
            .append(": describes peers=")
            .append(existingPeers)
            .append(" with storage.dir=")
            .append(existing.storageDir())
            .append(", but this `up` (base port ")
            .append(basePort)
            .append(") would use peers=")
            .append(
                wanted.peers().stream().map(PeerAddress::toString).collect(Collectors.joining(",")))
            .append(" with storage.dir=")
            .append(wanted.storageDir())
            .append("; ")
            .append(storageDir)
            .append(" already holds that cluster's data. ");
    PeerAddress first = existing.peers().get(0);
    if (existing.peers().equals(ClusterConfig.local(Math.min(first.port(), 65533)).peers())) {
      message.append("Start it as created (--base-port ").append(first.port()).append("), ");
    }
    return message
        .append("use another --data-dir, or fix the file if you moved the data.")
        .toString();
  }
}
