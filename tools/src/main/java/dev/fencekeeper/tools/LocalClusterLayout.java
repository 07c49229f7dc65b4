package dev.fencekeeper.tools;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PeerAddress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The files of the cluster {@code up} runs: {@code DIR/nX.properties} per node, and {@code DIR/nX/} for its
 * Raft storage and {@code node.log}. Reusing the directory is how a restart resumes the same state.
 */
final class LocalClusterLayout {

  /** One node's files. */
  record Node(PeerAddress peer, Path configFile, Path storageDir) {
    String id() {
      return peer.id();
    }

    Path logFile() {
      return storageDir.resolve("node.log");
    }
  }

  private LocalClusterLayout() {}

  /**
   * Makes sure each node has a config file describing the three-node cluster on {@code basePort}.
   *
   * <p>An existing file is kept when it describes the same node of the same cluster, so hand edits (limits,
   * timeouts) survive restarts. One describing another cluster (other ports, other storage) is rewritten
   * only while its node has no Raft data yet: pointing an existing Raft log at new addresses would leave the
   * stored membership and the config disagreeing, so that case is refused with the way out.
   *
   * @throws ConfigException if a file is unreadable or invalid, or conflicts with existing data
   */
  static List<Node> prepare(Path dataDir, int basePort) {
    ClusterConfig cluster = ClusterConfig.local(basePort);
    List<Node> nodes = new ArrayList<>();
    for (PeerAddress peer : cluster.peers()) {
      Node node = new Node(peer, dataDir.resolve(peer.id() + ".properties"), dataDir.resolve(peer.id()));
      ClusterConfig wanted = cluster.withNodeId(peer.id()).withStorageDir(node.storageDir());
      if (!Files.exists(node.configFile())) {
        wanted.store(node.configFile());
      } else {
        ClusterConfig existing = ClusterConfig.load(node.configFile());
        if (!sameNode(existing, wanted)) {
          if (hasRaftData(node.storageDir())) {
            throw new ConfigException(conflict(node, existing, wanted, basePort));
          }
          wanted.store(node.configFile());
        }
      }
      nodes.add(node);
    }
    return nodes;
  }

  private static boolean sameNode(ClusterConfig existing, ClusterConfig wanted) {
    return existing.clusterName().equals(wanted.clusterName())
        && existing.peers().equals(wanted.peers())
        && existing.nodeId().equals(wanted.nodeId())
        && existing.storageDir().toAbsolutePath().normalize()
            .equals(wanted.storageDir().toAbsolutePath().normalize());
  }

  /** Ratis keeps each group in a subdirectory of the storage dir; node.log alone is not data. */
  private static boolean hasRaftData(Path storageDir) {
    if (!Files.isDirectory(storageDir)) {
      return false;
    }
    try (Stream<Path> entries = Files.list(storageDir)) {
      return entries.anyMatch(Files::isDirectory);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String conflict(Node node, ClusterConfig existing, ClusterConfig wanted, int basePort) {
    String existingPeers = existing.peers().stream().map(PeerAddress::toString).collect(Collectors.joining(","));
    StringBuilder message = new StringBuilder()
        .append(node.configFile()).append(": describes peers=").append(existingPeers)
        .append(" with storage.dir=").append(existing.storageDir())
        .append(", but this `up` (base port ").append(basePort).append(") would use peers=")
        .append(wanted.peers().stream().map(PeerAddress::toString).collect(Collectors.joining(",")))
        .append(" with storage.dir=").append(wanted.storageDir())
        .append("; ").append(node.storageDir()).append(" already holds that cluster's data. ");
    PeerAddress first = existing.peers().get(0);
    if (existing.peers().equals(ClusterConfig.local(Math.min(first.port(), 65533)).peers())) {
      message.append("Start it as created (--base-port ").append(first.port()).append("), ");
    }
    return message.append("use another --data-dir, or fix the file if you moved the data.").toString();
  }
}
