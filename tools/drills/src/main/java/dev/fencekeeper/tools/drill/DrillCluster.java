package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.NodeStatus;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.config.PropertyNames;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.local.LocalCluster;
import dev.fencekeeper.server.local.NodeCommand;
import dev.fencekeeper.tools.ClassArchive;
import dev.fencekeeper.tools.FencekeeperCli;
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
import java.util.stream.Collectors;

/**
 * The drill's own cluster: one JVM per node under a temp dir ({@link LocalCluster}'s process
 * flavour), which the drill kills, pauses and restarts, each node in its network namespace if it
 * has one. Every node gets a bounded heap (the drills run on small machines beside builds) and the
 * controller's pid, so a node never outlives a controller that was itself killed.
 */
public final class DrillCluster implements AutoCloseable {
  /**
   * Node JVM flags: small heap, one GC thread pool that does not fight the other processes for
   * cores.
   */
  static final List<String> NODE_JVM_FLAGS =
      List.of(
          "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:+ExitOnOutOfMemoryError");

  /**
   * Forwarded to every node when set on the controller: a debugging run's logging configuration
   * reaches the nodes as it reaches the drill's own JVM.
   */
  private static final List<String> FORWARDED_PROPERTIES =
      List.of("fencekeeper.log.level", "logback.configurationFile");

  /**
   * One node: its address, files, and (for the partition drill) the network namespace it runs in.
   */
  public record Node(
      PeerAddress peer, Path configFile, Path dir, String netns, long clockOffsetMs) {
    public String id() {
      return peer.id();
    }

    Path logFile() {
      return dir.resolve("node.log");
    }
  }

  private final Path root;
  private final Map<String, Node> nodes = new LinkedHashMap<>();
  private final LocalCluster processes;
  private final Map<String, Boolean> paused = new LinkedHashMap<>();
  private final DrillLog log;
  private final String nodeMain;
  private volatile boolean clockSteps;

  DrillCluster(Path root, DrillLog log) {
    this(root, log, FencekeeperCli.class.getName());
  }

  /**
   * @param nodeMain the class whose {@code main} runs a node from {@code server --config FILE}
   *     arguments, as the command line's does; it must be on this JVM's class path
   */
  DrillCluster(Path root, DrillLog log, String nodeMain) {
    this.root = root;
    this.log = log;
    this.nodeMain = nodeMain;
    this.processes =
        LocalCluster.builder(root)
            .nodes(0)
            .processes(this::nodeCommand)
            .logFiles(id -> root.resolve(id).resolve("node.log"))
            .build();
  }

  Path root() {
    return root;
  }

  /** Writes the node's config (peers = {@code members}) without starting it. */
  synchronized Node define(
      PeerAddress peer, List<PeerAddress> members, String netns, long clockOffsetMs) {
    Path dir = root.resolve(peer.id());
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String peers = members.stream().map(PeerAddress::toString).collect(Collectors.joining(","));
    ClusterConfig config =
        ClusterConfig.forPeers(peers)
            .withNodeId(peer.id())
            .withStorageDir(dir.resolve("raft"))
            .withClockOffsetMs(clockOffsetMs);
    if (processes.nodeIds().contains(peer.id())) {
      processes.remove(peer.id());
    }
    processes.add(config);
    Node node = new Node(peer, processes.configFile(peer.id()), dir, netns, clockOffsetMs);
    nodes.put(peer.id(), node);
    return node;
  }

  /** Nodes started from now on follow a wall-clock step written with {@link #stepClock}. */
  void enableClockSteps() {
    clockSteps = true;
  }

  /**
   * Steps node {@code id}'s wall clock to {@code stepMs} from its system clock (plus its offset);
   * the node picks it up within 20 ms. Its monotonic clock is not touched, as with a real step of
   * the system clock.
   */
  void stepClock(String id, long stepMs) {
    Path file = node(id).dir().resolve("clock-step");
    Path tmp = node(id).dir().resolve("clock-step.tmp");
    try {
      Files.writeString(tmp, Long.toString(stepMs));
      Files.move(
          tmp,
          file,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot step the clock of " + id, e);
    }
  }

  synchronized List<Node> nodes() {
    return List.copyOf(nodes.values());
  }

  synchronized Node node(String id) {
    Node node = nodes.get(id);
    if (node == null) {
      throw new IllegalArgumentException("no node " + id);
    }
    return node;
  }

  synchronized void forget(String id) {
    nodes.remove(id);
    processes.remove(id);
  }

  /**
   * A client config for {@code members}, with a short request timeout so that an operation caught
   * by a fault ends as "unknown" within seconds instead of hanging for the whole drill.
   */
  static ClusterConfig clientConfig(List<PeerAddress> members) {
    return clientConfig(
        ClusterConfig.forPeers(
            members.stream().map(PeerAddress::toString).collect(Collectors.joining(","))));
  }

  /** {@code cluster} as the workload's clients see it: requests time out after a second. */
  static ClusterConfig clientConfig(ClusterConfig cluster) {
    Properties p = cluster.toProperties();
    p.setProperty(PropertyNames.CLIENT_REQUEST_TIMEOUT, "1s");
    return ClusterConfig.fromProperties(p);
  }

  /**
   * For membership changes and leader moves: slower calls than the workload's, which must not time
   * out.
   */
  synchronized ClusterConfig adminConfig() {
    Properties p =
        ClusterConfig.forPeers(
                nodes.values().stream()
                    .map(n -> n.peer().toString())
                    .collect(Collectors.joining(",")))
            .toProperties();
    p.setProperty(PropertyNames.CLIENT_REQUEST_TIMEOUT, "5s");
    return ClusterConfig.fromProperties(p);
  }

  synchronized ClusterConfig clientConfig() {
    return clientConfig(nodes.values().stream().map(Node::peer).toList());
  }

  void start(String id) {
    start(id, false);
  }

  void start(String id, boolean join) {
    node(id);
    try {
      processes.start(id, join);
    } catch (UncheckedIOException e) {
      throw new UncheckedIOException("cannot start node " + id, e.getCause());
    }
    long pid = processes.process(id).orElseThrow().pid();
    synchronized (this) {
      paused.put(id, false);
    }
    log.info("started " + id + " (pid " + pid + ")" + (join ? " to join" : ""));
  }

  /**
   * How node {@code id} runs, decided when it starts: in its network namespace if it has one, with
   * the drill's JVM flags, and following clock steps once they are enabled.
   */
  private NodeCommand nodeCommand(String id) {
    Node node = node(id);
    List<String> flags = new ArrayList<>(NODE_JVM_FLAGS);
    flags.addAll(ClassArchive.childJvmFlags());
    for (String property : FORWARDED_PROPERTIES) {
      String value = System.getProperty(property);
      if (value != null) {
        flags.add("-D" + property + "=" + value);
      }
    }
    if (clockSteps) {
      flags.add(
          "-D"
              + FencekeeperServer.CLOCK_STEP_FILE_PROPERTY
              + "="
              + node.dir().resolve("clock-step"));
    }
    return new NodeCommand(
        node.netns() == null ? List.of() : List.of("ip", "netns", "exec", node.netns()),
        javaBinary(),
        flags,
        System.getProperty("java.class.path"),
        nodeMain,
        List.of("server"));
  }

  static String javaBinary() {
    return NodeCommand.thisJava();
  }

  Optional<Long> pid(String id) {
    return processes.pid(id);
  }

  /**
   * The exit code of node {@code id}'s process once it has ended by itself; empty while it runs.
   */
  Optional<Integer> exitCode(String id) {
    OptionalInt code = processes.exitCode(id);
    return code.isPresent() ? Optional.of(code.getAsInt()) : Optional.empty();
  }

  synchronized boolean isServing(String id) {
    return processes.isRunning(id) && !paused.getOrDefault(id, false);
  }

  /** kill -9: no shutdown hook, no flush beyond what Raft already synced. */
  void kill(String id) {
    Optional<Process> process = processes.process(id);
    synchronized (this) {
      paused.remove(id);
    }
    if (process.isEmpty()) {
      return;
    }
    processes.kill(id);
    log.info("killed " + id + " (kill -9, pid " + process.get().pid() + ")");
  }

  /**
   * SIGTERM, as systemd or an operator stops a node: it shuts down cleanly (snapshot, close) and
   * exits.
   */
  void stop(String id, Duration timeout) throws InterruptedException {
    Optional<Process> process = processes.process(id);
    if (process.isEmpty()) {
      return;
    }
    OptionalInt exit = processes.stop(id, timeout);
    if (Thread.interrupted()) {
      throw new InterruptedException("stopping " + id);
    }
    if (exit.isEmpty()) {
      throw new DrillException(
          id
              + " did not stop within "
              + timeout.toSeconds()
              + "s of SIGTERM; see "
              + node(id).logFile());
    }
    synchronized (this) {
      paused.remove(id);
    }
    log.info(
        "stopped "
            + id
            + " (SIGTERM, pid "
            + process.get().pid()
            + ", exit "
            + exit.getAsInt()
            + ")");
    if (exit.getAsInt() != 0) {
      throw new DrillException(
          id
              + " exited "
              + exit.getAsInt()
              + " on SIGTERM (expected 0); see "
              + node(id).logFile());
    }
  }

  /**
   * Waits until node {@code id} follows a leader and has applied what that leader had committed
   * when the wait began: the node is back in service, as an operator checks before restarting the
   * next one.
   *
   * @throws DrillException if the node's process exits meanwhile, or it does not catch up in time
   */
  void awaitCaughtUp(String id, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    try (FencingClient client = FencingClient.connect(clientConfig(), "drill-catch-up")) {
      long target = -1;
      while (System.nanoTime() < deadline) {
        Optional<Integer> exit = exitCode(id);
        if (exit.isPresent()) {
          throw new DrillException(
              id + " exited with code " + exit.get() + "; see " + node(id).logFile());
        }
        try {
          if (target < 0) {
            String leader = awaitLeader(Duration.ofSeconds(30));
            target = client.nodeStatus(leader, Duration.ofSeconds(2)).commitIndex();
          }
          NodeStatus info = client.nodeStatus(id, Duration.ofSeconds(2));
          if (!info.leaderId().isEmpty() && info.appliedIndex() >= target) {
            return;
          }
        } catch (RuntimeException e) {
          log.debug(id + " not caught up yet: " + e);
        }
        Thread.sleep(200);
      }
    }
    throw new DrillException(
        id + " did not catch up within " + timeout.toSeconds() + "s; see " + node(id).logFile());
  }

  void pause(String id) {
    long pid = pid(id).orElseThrow(() -> new IllegalStateException(id + " is not running"));
    Signals.send("STOP", pid);
    synchronized (this) {
      paused.put(id, true);
    }
    log.info("paused " + id + " (SIGSTOP, pid " + pid + ")");
  }

  void resume(String id) {
    Optional<Long> pid = pid(id);
    if (pid.isEmpty()) {
      return;
    }
    Signals.send("CONT", pid.get());
    synchronized (this) {
      paused.put(id, false);
    }
    log.info("resumed " + id + " (SIGCONT)");
  }

  /**
   * The leader some serving node reports, preferring the highest term; empty during an election.
   */
  private Optional<String> leader(FencingClient client, boolean[] anyAnswer) {
    String leader = null;
    long bestTerm = -1;
    for (Node node : nodes()) {
      if (!isServing(node.id())) {
        continue;
      }
      try {
        NodeInfo info = Wire.nodeInfo(client, node.id(), Duration.ofSeconds(2));
        anyAnswer[0] = true;
        if ("LEADER".equals(info.getRole()) && info.getTerm() > bestTerm) {
          bestTerm = info.getTerm();
          leader = info.getId();
        }
      } catch (RuntimeException e) {
        // Unreachable or busy right now: another node may still know.
        log.debug("no answer from " + node.id() + ": " + e);
      }
    }
    return Optional.ofNullable(leader);
  }

  /**
   * Polls until some node leads. A client whose channels all failed (every node was down) may sit
   * in gRPC's reconnect back-off longer than a probe waits, so after a few rounds without any
   * answer it starts afresh.
   */
  String awaitLeader(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    FencingClient client = FencingClient.connect(clientConfig(), "drill-probe");
    int silentRounds = 0;
    try {
      while (System.nanoTime() < deadline) {
        boolean[] anyAnswer = new boolean[1];
        Optional<String> leader = leader(client, anyAnswer);
        if (leader.isPresent()) {
          return leader.get();
        }
        silentRounds = anyAnswer[0] ? 0 : silentRounds + 1;
        if (silentRounds >= 3) {
          client.close();
          client = FencingClient.connect(clientConfig(), "drill-probe");
          silentRounds = 0;
        }
        Thread.sleep(200);
      }
    } finally {
      client.close();
    }
    throw new DrillException(
        "no leader within " + timeout.toSeconds() + "s; node logs are under " + root);
  }

  /**
   * Waits until {@code peer} accepts connections: a node started to join must be up before it is
   * added.
   */
  void awaitListening(PeerAddress peer, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      try (java.net.Socket socket = new java.net.Socket()) {
        socket.connect(new java.net.InetSocketAddress(peer.host(), peer.port()), 1_000);
        return;
      } catch (IOException e) {
        Thread.sleep(200);
      }
    }
    throw new DrillException(peer + " did not start listening within " + timeout.toSeconds() + "s");
  }

  /**
   * Resumes paused nodes and kills every node this drill started, each one even when another does
   * not die.
   */
  @Override
  public void close() {
    Map<String, Process> started = new LinkedHashMap<>();
    for (String id : processes.nodeIds()) {
      processes.process(id).ifPresent(p -> started.put(id, p));
    }
    started.values().forEach(p -> Signals.sendQuietly("CONT", p.pid()));
    try {
      processes.close(Duration.ZERO);
    } catch (RuntimeException e) {
      log.info("not every node stopped: " + e.getMessage());
    }
    synchronized (this) {
      paused.clear();
    }
    started.forEach((id, p) -> log.info("killed " + id + " (kill -9, pid " + p.pid() + ")"));
  }
}
