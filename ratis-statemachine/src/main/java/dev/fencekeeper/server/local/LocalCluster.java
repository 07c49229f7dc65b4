package dev.fencekeeper.server.local;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.NodeStatus;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.config.PropertyNames;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.local.LaunchedNode.InProcess;
import dev.fencekeeper.server.local.LaunchedNode.OwnProcess;
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
import java.util.OptionalInt;
import java.util.Properties;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * A cluster of nodes on this machine, for the tests, {@code up}, the drills and the bench: either
 * every node in this JVM ({@link Flavour#IN_PROCESS}) or each in a JVM of its own ({@link
 * Flavour#PROCESSES}), with the same handling of both: start all, await a leader, stop, start or
 * kill one node, and {@link #close}, which stops every node it started even when one of them fails
 * to stop. Build one with {@link #builder}.
 */
public final class LocalCluster implements AutoCloseable {
  /** Where the nodes run. */
  public enum Flavour {
    /** Every node in this JVM, each a {@link FencekeeperServer} (or what the starter returns). */
    IN_PROCESS,
    /** Each node in a JVM of its own, run by a {@link NodeCommand}, its output in its log file. */
    PROCESSES
  }

  /** Starts one node in this JVM from its complete config; closing the result stops it. */
  @FunctionalInterface
  public interface InProcessStarter {
    AutoCloseable start(ClusterConfig node, boolean join) throws IOException;
  }

  /** Real fencekeeper nodes: {@link FencekeeperServer#start} or, to join, its {@code join}. */
  public static final InProcessStarter SERVERS =
      (node, join) -> join ? FencekeeperServer.join(node) : FencekeeperServer.start(node);

  /** How long a killed process gets to disappear before it counts as not stopped. */
  private static final Duration KILL_WAIT = Duration.ofSeconds(5);

  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);
  private static final long PROBE_INTERVAL_MS = 100;

  /**
   * One node's definition: its complete config, the file a process reads it from and the file its
   * output goes to.
   */
  private record Member(ClusterConfig config, Path configFile, Path logFile) {}

  /** A node's own settings, left out of the cluster as a client sees it. */
  private static final List<String> NODE_KEYS =
      List.of(
          PropertyNames.NODE_ID,
          PropertyNames.STORAGE_DIR,
          PropertyNames.LOG_DIR,
          PropertyNames.METRICS_PORT,
          PropertyNames.CLIENT_PORT,
          PropertyNames.HTTP_PORT,
          PropertyNames.CLOCK_OFFSET);

  private final Flavour flavour;
  private final Path dataDir;
  private final Function<String, Path> logFiles;
  private final InProcessStarter starter;
  private final Function<String, NodeCommand> commands;
  private final Duration stopGrace;
  private final Map<String, Member> members = new LinkedHashMap<>();
  private final Map<String, LaunchedNode> launched = new LinkedHashMap<>();
  private ClusterConfig config;

  LocalCluster(
      Flavour flavour,
      Path dataDir,
      Function<String, Path> logFiles,
      InProcessStarter starter,
      Function<String, NodeCommand> commands,
      Duration stopGrace) {
    this.flavour = flavour;
    this.dataDir = dataDir;
    this.logFiles = logFiles;
    this.starter = starter;
    this.commands = commands;
    this.stopGrace = stopGrace;
  }

  /** A cluster whose files live under {@code dataDir}; see {@link LocalClusterBuilder}. */
  public static LocalClusterBuilder builder(Path dataDir) {
    return new LocalClusterBuilder(dataDir);
  }

  public Flavour flavour() {
    return flavour;
  }

  /**
   * The cluster as a client sees it: every defined node, with the settings of the first one but
   * none of its own (node id, storage, ports, clock offset).
   *
   * @throws IllegalStateException if no node is defined
   */
  public synchronized ClusterConfig config() {
    if (members.isEmpty()) {
      throw new IllegalStateException("no node is defined under " + dataDir);
    }
    if (config == null) {
      config = clusterView();
    }
    return config;
  }

  public Path dataDir() {
    return dataDir;
  }

  /** Every defined node, in the order they were defined. */
  public synchronized List<String> nodeIds() {
    return List.copyOf(members.keySet());
  }

  /** Node {@code id}'s complete config, as it starts with. */
  public synchronized ClusterConfig nodeConfig(String id) {
    return member(id).config();
  }

  /** The file a process of node {@code id} reads its config from. */
  public synchronized Path configFile(String id) {
    return member(id).configFile();
  }

  /** The file a process of node {@code id} writes its output to (appending across restarts). */
  public synchronized Path logFile(String id) {
    return member(id).logFile();
  }

  /** Where node {@code id} serves the client protocol, {@code host:port}. */
  public String clientAddress(String id) {
    return nodeConfig(id).clientAddress().address();
  }

  /** Every defined node's client address, in node order. */
  public List<String> clientAddresses() {
    return config().clientAddresses().stream().map(PeerAddress::address).toList();
  }

  /**
   * The {@code --peers} value naming every initial member with its id: {@code n1@host:port,...}.
   */
  public String peers() {
    return config().peers().stream().map(PeerAddress::toString).collect(Collectors.joining(","));
  }

  /**
   * Defines a node that is not started yet, e.g. one to join later; for the process flavour its
   * config is written to {@code DATA_DIR/ID.properties}.
   */
  public void add(ClusterConfig nodeConfig) {
    String id = nodeConfig.nodeId().orElseThrow(() -> new IllegalArgumentException("no node.id"));
    Path configFile = dataDir.resolve(id + ".properties");
    if (flavour == Flavour.PROCESSES) {
      store(nodeConfig, configFile);
    }
    define(nodeConfig, configFile);
  }

  /**
   * As {@link #add}, the node's config being in {@code configFile} already, as the caller keeps.
   */
  synchronized void define(ClusterConfig nodeConfig, Path configFile) {
    String id = nodeConfig.nodeId().orElseThrow(() -> new IllegalArgumentException("no node.id"));
    if (members.containsKey(id)) {
      throw new IllegalArgumentException("node " + id + " is defined already");
    }
    members.put(id, new Member(nodeConfig, configFile, logFiles.apply(id)));
    // Derived on first use, so a launcher that never asks (up, the drills) never depends on it.
    config = null;
  }

  private ClusterConfig clusterView() {
    Properties p = members.values().iterator().next().config().toProperties();
    NODE_KEYS.forEach(p::remove);
    p.setProperty(
        PropertyNames.PEERS,
        members.values().stream()
            .map(m -> m.config().self().toString())
            .collect(Collectors.joining(",")));
    return ClusterConfig.fromProperties(p);
  }

  /** Forgets a node that is not running (one removed from the group). */
  public synchronized void remove(String id) {
    if (isRunning(id)) {
      throw new IllegalStateException("node " + id + " is running");
    }
    members.remove(id);
    launched.remove(id);
    config = null;
  }

  /** Starts every defined node; if one fails to start, stops the others again and says why. */
  public LocalCluster startAll() {
    try {
      for (String id : nodeIds()) {
        start(id);
      }
    } catch (RuntimeException e) {
      try {
        close();
      } catch (RuntimeException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
    return this;
  }

  public void start(String id) {
    start(id, false);
  }

  /** Starts node {@code id}; with {@code join}, as a new member outside the group. */
  public void start(String id, boolean join) {
    start(id, join, UnaryOperator.identity());
  }

  /**
   * Starts node {@code id} with its config changed by {@code adjust} (a clock offset, say); for a
   * process the adjusted config is written to its config file first.
   */
  public void start(String id, boolean join, UnaryOperator<ClusterConfig> adjust) {
    Member member;
    synchronized (this) {
      member = member(id);
      if (isRunning(id)) {
        throw new IllegalStateException("node " + id + " is running already");
      }
    }
    ClusterConfig node = adjust.apply(member.config());
    LaunchedNode started;
    try {
      if (flavour == Flavour.IN_PROCESS) {
        started = new InProcess(starter.start(node, join));
      } else {
        if (node != member.config()) {
          store(node, member.configFile());
        }
        started = new OwnProcess(launch(id, member, join));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start node " + id, e);
    }
    synchronized (this) {
      launched.put(id, started);
    }
  }

  private Process launch(String id, Member member, boolean join) throws IOException {
    Files.createDirectories(member.logFile().toAbsolutePath().getParent());
    Files.createDirectories(member.config().storageDir());
    ProcessBuilder builder =
        new ProcessBuilder(commands.apply(id).commandLine(member.configFile(), join))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(member.logFile().toFile()));
    // The node's config file is complete: a FENCEKEEPER_<KEY> variable of this shell
    // (FENCEKEEPER_PEERS for the client verbs, say) must not override it in the node.
    builder.environment().keySet().removeAll(ClusterConfig.environmentVariables());
    return builder.start();
  }

  /**
   * Stops node {@code id} as an operator would, and if it is still running after the cluster's stop
   * grace, kills it.
   *
   * @throws IllegalStateException if it did not stop even then
   * @throws UncheckedIOException if closing a node in this JVM failed
   */
  public void stop(String id) {
    if (stop(id, stopGrace).isEmpty()) {
      kill(id);
    }
  }

  /**
   * Asks node {@code id} to stop (closes it, or sends SIGTERM) and waits up to {@code grace}.
   * Returns its exit code once it has stopped (0 for a node in this JVM); empty if it is still
   * running, which {@link #kill} or {@link #close} then ends.
   */
  public OptionalInt stop(String id, Duration grace) {
    LaunchedNode node = launchedNode(id);
    if (node == null) {
      return OptionalInt.of(0);
    }
    try {
      node.terminate();
      if (!node.awaitExit(grace)) {
        return OptionalInt.empty();
      }
    } catch (IOException e) {
      forget(id, node);
      throw new UncheckedIOException("stopping node " + id + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return OptionalInt.empty();
    }
    forget(id, node);
    return node.exitCode();
  }

  /** Stops node {@code id} without its cooperation (SIGKILL); returns once it is gone. */
  public void kill(String id) {
    LaunchedNode node = launchedNode(id);
    if (node == null) {
      return;
    }
    try {
      node.kill();
      if (!node.awaitExit(KILL_WAIT)) {
        throw new IllegalStateException("node " + id + " still runs after being killed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException("stopping node " + id + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while killing node " + id, e);
    } finally {
      forget(id, node);
    }
  }

  private synchronized void forget(String id, LaunchedNode node) {
    launched.remove(id, node);
  }

  /** Whether node {@code id} runs now: started, and neither stopped nor exited by itself. */
  public synchronized boolean isRunning(String id) {
    LaunchedNode node = launched.get(id);
    return node != null && node.isAlive();
  }

  /** The ids of the nodes running now, in definition order. */
  public synchronized List<String> runningIds() {
    return members.keySet().stream().filter(this::isRunning).toList();
  }

  /**
   * The process of node {@code id}'s latest start while the cluster tracks it: until it is stopped
   * or killed through the cluster, also once it has exited by itself.
   */
  public synchronized Optional<Process> process(String id) {
    return launched.get(id) instanceof OwnProcess own
        ? Optional.of(own.process())
        : Optional.empty();
  }

  /** The pid of node {@code id}'s process while it runs. */
  public Optional<Long> pid(String id) {
    return process(id).filter(Process::isAlive).map(Process::pid);
  }

  /** The exit code of node {@code id}'s process once it ended by itself; empty while it runs. */
  public synchronized OptionalInt exitCode(String id) {
    LaunchedNode node = launched.get(id);
    return node == null ? OptionalInt.empty() : node.exitCode();
  }

  /** What the starter returned for node {@code id}, while it runs in this JVM. */
  public synchronized Optional<AutoCloseable> inProcessNode(String id) {
    return launched.get(id) instanceof InProcess node && node.isAlive()
        ? Optional.of(node.node())
        : Optional.empty();
  }

  /** Node {@code id}'s server while it runs in this JVM. */
  public Optional<FencekeeperServer> server(String id) {
    return inProcessNode(id)
        .filter(FencekeeperServer.class::isInstance)
        .map(FencekeeperServer.class::cast);
  }

  /** The node a running node reports as leader, asking each once; empty during an election. */
  public Optional<String> leader() {
    try (FencingClient client = FencingClient.connect(config(), "local-cluster-probe")) {
      return leader(client);
    }
  }

  private Optional<String> leader(FencingClient client) {
    for (String id : runningIds()) {
      try {
        NodeStatus status = client.nodeStatus(id, PROBE_TIMEOUT);
        if (status.isLeader()) {
          return Optional.of(status.id());
        }
      } catch (RuntimeException e) {
        // starting, stopping or busy: another node may know
      }
    }
    return Optional.empty();
  }

  /**
   * Waits until a running node reports that it leads and returns its id.
   *
   * @throws IllegalStateException if none does within {@code timeout}, or no node runs any more
   */
  public String awaitLeader(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try (FencingClient client = FencingClient.connect(config(), "local-cluster-probe")) {
      while (System.nanoTime() < deadline && !runningIds().isEmpty()) {
        Optional<String> leader = leader(client);
        if (leader.isPresent()) {
          return leader.get();
        }
        Thread.sleep(PROBE_INTERVAL_MS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new IllegalStateException(
        "no leader within "
            + timeout.toSeconds()
            + "s among "
            + runningIds()
            + " under "
            + dataDir);
  }

  /**
   * Stops every node this cluster runs: asks all to stop at once, waits up to the stop grace, then
   * kills what is left. A node that fails to stop does not keep the others running; the failures
   * are thrown together once every node has been dealt with.
   */
  @Override
  public void close() {
    close(stopGrace);
  }

  /** As {@link #close()}, giving the nodes {@code grace} (zero: kill them at once). */
  public void close(Duration grace) {
    Map<String, LaunchedNode> nodes;
    synchronized (this) {
      nodes = new LinkedHashMap<>(launched);
    }
    List<RuntimeException> failures = new ArrayList<>();
    if (!grace.isZero()) {
      nodes.forEach((id, node) -> terminateQuietly(id, node, failures));
      long deadline = System.nanoTime() + grace.toNanos();
      for (LaunchedNode node : nodes.values()) {
        awaitQuietly(node, Duration.ofNanos(deadline - System.nanoTime()));
      }
    }
    nodes.forEach(
        (id, node) -> {
          if (node.isAlive()) {
            try {
              node.kill();
            } catch (IOException | RuntimeException e) {
              failures.add(new IllegalStateException("stopping node " + id + " failed", e));
            }
            if (!awaitQuietly(node, KILL_WAIT)) {
              failures.add(new IllegalStateException("node " + id + " did not stop"));
            }
          }
          forget(id, node);
        });
    if (!failures.isEmpty()) {
      RuntimeException first = failures.get(0);
      failures.subList(1, failures.size()).forEach(first::addSuppressed);
      throw first;
    }
  }

  private static void terminateQuietly(
      String id, LaunchedNode node, List<RuntimeException> failures) {
    try {
      node.terminate();
    } catch (IOException | RuntimeException e) {
      failures.add(new IllegalStateException("stopping node " + id + " failed", e));
    }
  }

  private static boolean awaitQuietly(LaunchedNode node, Duration timeout) {
    try {
      return node.awaitExit(timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !node.isAlive();
    }
  }

  private synchronized LaunchedNode launchedNode(String id) {
    member(id);
    return launched.get(id);
  }

  private Member member(String id) {
    Member member = members.get(id);
    if (member == null) {
      throw new IllegalArgumentException("no node " + id);
    }
    return member;
  }

  static void store(ClusterConfig config, Path file) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    config.store(file);
  }
}
