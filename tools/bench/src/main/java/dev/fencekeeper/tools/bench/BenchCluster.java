package dev.fencekeeper.tools.bench;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.server.local.LocalCluster;
import dev.fencekeeper.tools.Directories;
import dev.fencekeeper.tools.LocalClusterLayout;
import dev.fencekeeper.tools.LocalClusterLayout.Node;
import dev.fencekeeper.tools.NodeProcesses;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * The cluster a bench runs against: three node processes it starts under a temp dir (fencekeeper
 * nodes, or the baseline's counter nodes, with {@code up}'s JVM flags: {@link
 * NodeProcesses#localCluster}) and can kill -9 and restart one by one; or, with {@code
 * --endpoints}, a running cluster it only talks to.
 */
final class BenchCluster implements AutoCloseable {
  private static final Duration STOP_GRACE = Duration.ofSeconds(10);

  enum Kind {
    FENCEKEEPER(List.of("server")),
    COUNTER(List.of("bench", "counter-node"));

    final List<String> verb;

    Kind(List<String> verb) {
      this.verb = verb;
    }
  }

  private final Kind kind;
  private final ClusterConfig config;
  private final Path dataDir; // null for an external cluster
  private final Map<String, Node> nodes = new LinkedHashMap<>();
  private LocalCluster processes; // null for an external cluster

  private BenchCluster(Kind kind, ClusterConfig config, Path dataDir) {
    this.kind = kind;
    this.config = config;
    this.dataDir = dataDir;
  }

  /** A running cluster the bench did not start: it can be measured, not killed. */
  static BenchCluster external(ClusterConfig config) {
    return new BenchCluster(Kind.FENCEKEEPER, config, null);
  }

  /**
   * Starts three local node processes of {@code kind} on free loopback ports, data under a temp
   * dir.
   */
  static BenchCluster startLocal(Kind kind) throws IOException {
    return startLocal(kind, Map.of());
  }

  /**
   * As {@link #startLocal(Kind)}, every node's config file carrying {@code nodeSettings} (config
   * keys and values, e.g. {@code snapshot.auto-trigger.entries}) over the local defaults.
   *
   * @throws dev.fencekeeper.config.ConfigException if a setting is not a valid config key and value
   */
  static BenchCluster startLocal(Kind kind, Map<String, String> nodeSettings) throws IOException {
    Path dir = Files.createTempDirectory("fencekeeper-bench-" + kind.name().toLowerCase() + "-");
    int basePort = freeBasePort();
    BenchCluster cluster = new BenchCluster(kind, ClusterConfig.local(basePort), dir);
    try {
      for (Node node : LocalClusterLayout.prepare(dir, basePort)) {
        applySettings(node, nodeSettings);
        cluster.nodes.put(node.id(), node);
      }
      cluster.processes =
          NodeProcesses.localCluster(List.copyOf(cluster.nodes.values()), kind.verb);
      cluster.processes.startAll();
    } catch (UncheckedIOException e) {
      cluster.close();
      throw e.getCause();
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
    return cluster;
  }

  /**
   * Rewrites {@code node}'s config file with {@code settings} over what it holds; the result is
   * checked as any config file is.
   *
   * @throws dev.fencekeeper.config.ConfigException naming the key if a setting is not valid
   */
  static void applySettings(Node node, Map<String, String> settings) {
    if (settings.isEmpty()) {
      return;
    }
    Properties properties = ClusterConfig.load(node.configFile()).toProperties();
    settings.forEach(properties::setProperty);
    ClusterConfig.fromProperties(properties).store(node.configFile());
  }

  /** Three consecutive Raft ports, their client (+200) and metrics ports (+100), all free now. */
  private static int freeBasePort() {
    return LocalPorts.freeBasePort(3, LocalClusterLayout.METRICS_PORT_OFFSET);
  }

  ClusterConfig config() {
    return config;
  }

  boolean isLocal() {
    return dataDir != null;
  }

  Path dataDir() {
    return dataDir;
  }

  /** Pids of the nodes running now (for an external cluster: as the nodes report them). */
  List<Long> serverPids(FencingClient client) {
    if (isLocal()) {
      List<Long> pids = new ArrayList<>();
      processes.runningIds().forEach(id -> processes.pid(id).ifPresent(pids::add));
      return pids;
    }
    List<Long> pids = new ArrayList<>();
    for (var peer : config.clientAddresses()) {
      try {
        pids.add(Wire.nodeInfo(client, peer.id(), Duration.ofSeconds(2)).getPid());
      } catch (RuntimeException e) {
        // unreachable: its CPU cannot be counted, and the report says CPU is unknown
        return List.of();
      }
    }
    return pids;
  }

  /** The node that says it leads, asking each in turn. */
  Optional<String> leader(FencingClient client) {
    for (var peer : config.clientAddresses()) {
      try {
        NodeInfo info = Wire.nodeInfo(client, peer.id(), Duration.ofSeconds(1));
        if ("LEADER".equals(info.getRole())) {
          return Optional.of(info.getId());
        }
      } catch (RuntimeException e) {
        // down or busy: ask the next
      }
    }
    return Optional.empty();
  }

  /** The highest term any node reports: its growth over a run counts the elections in it. */
  long term(FencingClient client) {
    long term = -1;
    for (var peer : config.clientAddresses()) {
      try {
        term = Math.max(term, Wire.nodeInfo(client, peer.id(), Duration.ofSeconds(1)).getTerm());
      } catch (RuntimeException e) {
        // down or busy
      }
    }
    return term;
  }

  /**
   * The highest last-applied log index any node reports, or -1 if none answers: its growth over a
   * window counts the log entries the window applied.
   */
  long appliedIndex(FencingClient client) {
    long applied = -1;
    for (var peer : config.clientAddresses()) {
      try {
        applied =
            Math.max(
                applied,
                Wire.nodeInfo(client, peer.id(), Duration.ofSeconds(1)).getLastAppliedIndex());
      } catch (RuntimeException e) {
        // down or busy
      }
    }
    return applied;
  }

  /** kill -9 of node {@code id}; returns once the process is gone. */
  void kill(String id) {
    processes.kill(id); // SIGKILL: no shutdown hook, no clean close
  }

  void restart(String id) throws IOException {
    try {
      processes.start(id);
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  /** The ids of the nodes, in start order. */
  List<String> nodeIds() {
    return List.copyOf(nodes.keySet());
  }

  /** The pid of node {@code id} while it runs; empty when it does not. */
  Optional<Long> pid(String id) {
    return processes == null ? Optional.empty() : processes.pid(id);
  }

  /** Where node {@code id} keeps its Raft log and snapshots. */
  Path storageDir(String id) {
    return nodes.get(id).storageDir();
  }

  @Override
  public void close() {
    try {
      if (processes != null) {
        processes.close(STOP_GRACE);
      }
    } finally {
      if (dataDir != null) {
        Directories.deleteTree(dataDir);
      }
    }
  }
}
