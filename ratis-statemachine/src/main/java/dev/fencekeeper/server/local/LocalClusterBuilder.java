package dev.fencekeeper.server.local;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PropertyNames;
import dev.fencekeeper.server.local.LocalCluster.Flavour;
import dev.fencekeeper.server.local.LocalCluster.InProcessStarter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.function.Function;

/**
 * What a {@link LocalCluster} looks like. By default: three nodes {@code n1..n3} in this JVM on
 * 127.0.0.1, each on a Raft port picked free (its client and gateway ports, + {@value
 * ClusterConfig#CLIENT_PORT_OFFSET} and + {@value ClusterConfig#HTTP_PORT_OFFSET}, free too), data
 * in {@code DATA_DIR/nX}, a process's config in {@code DATA_DIR/nX.properties} and its output in
 * {@code DATA_DIR/nX/node.log}. Or nodes whose configs the caller prepared ({@link #node}).
 */
public final class LocalClusterBuilder {
  /** How long {@link LocalCluster#close} waits for SIGTERM to stop a process before killing it. */
  public static final Duration DEFAULT_STOP_GRACE = Duration.ofSeconds(10);

  private final Path dataDir;
  private int nodes = 3;
  private int basePort;
  private boolean metricsPorts;
  private final Properties properties = new Properties();
  private Flavour flavour = Flavour.IN_PROCESS;
  private InProcessStarter starter = LocalCluster.SERVERS;
  private Function<String, NodeCommand> commands;
  private Function<String, Path> storageDirs;
  private Function<String, Path> logFiles;
  private Duration stopGrace = DEFAULT_STOP_GRACE;
  private final List<ClusterConfig> preparedConfigs = new ArrayList<>();
  private final List<Path> preparedFiles = new ArrayList<>();

  LocalClusterBuilder(Path dataDir) {
    this.dataDir = dataDir;
    this.storageDirs = dataDir::resolve;
    this.logFiles = id -> storageDirs.apply(id).resolve("node.log");
  }

  /** How many nodes, {@code n1..nN}; none for a cluster whose nodes are added later. */
  public LocalClusterBuilder nodes(int count) {
    if (count < 0) {
      throw new IllegalArgumentException("nodes: " + count + " must not be negative");
    }
    this.nodes = count;
    return this;
  }

  /** Raft ports {@code port, port+1, ...} instead of ports picked free. */
  public LocalClusterBuilder basePort(int port) {
    this.basePort = port;
    return this;
  }

  /**
   * Each node also serves {@code /metrics} and {@code /health}: on its Raft port + 100 with a base
   * port, else on a port picked free. The port stays the node's across restarts.
   */
  public LocalClusterBuilder metricsPorts(boolean on) {
    this.metricsPorts = on;
    return this;
  }

  /** Config properties over the defaults for every node (limits, timeouts, cluster.name). */
  public LocalClusterBuilder properties(Properties extra) {
    properties.putAll(extra);
    return this;
  }

  public LocalClusterBuilder property(String key, String value) {
    properties.setProperty(key, value);
    return this;
  }

  /**
   * Every node in this JVM, started by {@code starter} ({@link LocalCluster#SERVERS} by default).
   */
  public LocalClusterBuilder inProcess(InProcessStarter starter) {
    this.flavour = Flavour.IN_PROCESS;
    this.starter = Objects.requireNonNull(starter);
    return this;
  }

  /** Each node in a JVM of its own, run by {@code command}. */
  public LocalClusterBuilder processes(NodeCommand command) {
    Objects.requireNonNull(command);
    return processes(id -> command);
  }

  /**
   * Each node in a JVM of its own, run by the command {@code commands} gives for its id when it
   * starts (a network namespace of its own, say).
   */
  public LocalClusterBuilder processes(Function<String, NodeCommand> commands) {
    this.flavour = Flavour.PROCESSES;
    this.commands = Objects.requireNonNull(commands);
    return this;
  }

  /** Where node {@code id} keeps its Raft data; {@code DATA_DIR/ID} by default. */
  public LocalClusterBuilder storageDirs(Function<String, Path> dirs) {
    this.storageDirs = Objects.requireNonNull(dirs);
    return this;
  }

  /**
   * Where a process of node {@code id} writes its output; {@code STORAGE_DIR/node.log} by default.
   */
  public LocalClusterBuilder logFiles(Function<String, Path> files) {
    this.logFiles = Objects.requireNonNull(files);
    return this;
  }

  /** How long SIGTERM gets before a process is killed, in {@link LocalCluster#stop(String)}. */
  public LocalClusterBuilder stopGrace(Duration grace) {
    this.stopGrace = Objects.requireNonNull(grace);
    return this;
  }

  /**
   * A node whose complete config the caller prepared, in {@code configFile} for a process; the file
   * is used as it is (never rewritten). With such nodes, the node count, ports and properties of
   * this builder are not used.
   */
  public LocalClusterBuilder node(ClusterConfig nodeConfig, Path configFile) {
    preparedConfigs.add(nodeConfig);
    preparedFiles.add(configFile);
    return this;
  }

  /** The cluster, no node started yet. */
  public LocalCluster build() {
    LocalCluster built = new LocalCluster(flavour, dataDir, logFiles, starter, commands, stopGrace);
    if (!preparedConfigs.isEmpty() || nodes == 0) {
      for (int i = 0; i < preparedConfigs.size(); i++) {
        built.define(preparedConfigs.get(i), preparedFiles.get(i));
      }
      return built;
    }
    ClusterConfig cluster = generatedConfig();
    for (int i = 1; i <= nodes; i++) {
      String id = "n" + i;
      ClusterConfig node = cluster.withNodeId(id).withStorageDir(storageDirs.apply(id));
      if (metricsPorts) {
        node = node.withMetricsPort(basePort > 0 ? basePort + i - 1 + 100 : LocalPorts.freePort());
      }
      built.add(node);
    }
    return built;
  }

  /** Builds the cluster and starts every node; closes it again if one fails to start. */
  public LocalCluster start() {
    return build().startAll();
  }

  private ClusterConfig generatedConfig() {
    StringBuilder peers = new StringBuilder();
    for (int i = 1; i <= nodes; i++) {
      int port = basePort > 0 ? basePort + i - 1 : LocalPorts.freeNodePort();
      peers.append(i > 1 ? "," : "").append("n").append(i).append("@127.0.0.1:").append(port);
    }
    Properties p = new Properties();
    p.setProperty(PropertyNames.PEERS, peers.toString());
    p.putAll(properties);
    return ClusterConfig.fromProperties(p);
  }
}
