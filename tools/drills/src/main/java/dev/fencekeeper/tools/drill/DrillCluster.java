package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.NodeStatus;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.server.FencekeeperServer;
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
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The drill's own cluster: one JVM per node under a temp dir, which the drill kills, pauses and
 * restarts. Every node gets a bounded heap (the drills run on small machines beside builds) and the
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

  /** Forwarded to every node when set on the controller. */
  private static final List<String> FORWARDED_PROPERTIES = List.of("fencekeeper.log.level");

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
  private final Map<String, Process> processes = new LinkedHashMap<>();
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
    Path file = root.resolve(peer.id() + ".properties");
    config.store(file);
    Node node = new Node(peer, file, dir, netns, clockOffsetMs);
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
  }

  /**
   * A client config for {@code members}, with a short request timeout so that an operation caught
   * by a fault ends as "unknown" within seconds instead of hanging for the whole drill.
   */
  static ClusterConfig clientConfig(List<PeerAddress> members) {
    Properties p =
        ClusterConfig.forPeers(
                members.stream().map(PeerAddress::toString).collect(Collectors.joining(",")))
            .toProperties();
    p.setProperty("client.request.timeout", "1s");
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
    p.setProperty("client.request.timeout", "5s");
    return ClusterConfig.fromProperties(p);
  }

  synchronized ClusterConfig clientConfig() {
    return clientConfig(nodes.values().stream().map(Node::peer).toList());
  }

  void start(String id) {
    start(id, false);
  }

  void start(String id, boolean join) {
    Node node = node(id);
    List<String> command = new ArrayList<>();
    if (node.netns() != null) {
      command.addAll(List.of("ip", "netns", "exec", node.netns()));
    }
    command.add(javaBinary());
    command.addAll(NODE_JVM_FLAGS);
    command.addAll(ClassArchive.childJvmFlags());
    for (String property : FORWARDED_PROPERTIES) {
      String value = System.getProperty(property);
      if (value != null) {
        command.add("-D" + property + "=" + value);
      }
    }
    if (clockSteps) {
      command.add(
          "-D"
              + FencekeeperServer.CLOCK_STEP_FILE_PROPERTY
              + "="
              + node.dir().resolve("clock-step"));
    }
    command.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            nodeMain,
            "server",
            "--config",
            node.configFile().toString(),
            "--parent-pid",
            Long.toString(ProcessHandle.current().pid())));
    if (join) {
      command.add("--join");
    }
    try {
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(node.logFile().toFile()));
      // The node's config file is complete: a FENCEKEEPER_<KEY> variable of this shell
      // (FENCEKEEPER_PEERS for the client verbs, say) must not override it in the node.
      builder.environment().keySet().removeAll(ClusterConfig.environmentVariables());
      Process process = builder.start();
      synchronized (this) {
        processes.put(id, process);
        paused.put(id, false);
      }
      log.info("started " + id + " (pid " + process.pid() + ")" + (join ? " to join" : ""));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start node " + id, e);
    }
  }

  static String javaBinary() {
    return ProcessHandle.current()
        .info()
        .command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
  }

  synchronized Optional<Long> pid(String id) {
    Process p = processes.get(id);
    return p == null || !p.isAlive() ? Optional.empty() : Optional.of(p.pid());
  }

  /**
   * The exit code of node {@code id}'s process once it has ended by itself; empty while it runs.
   */
  synchronized Optional<Integer> exitCode(String id) {
    Process p = processes.get(id);
    return p == null || p.isAlive() ? Optional.empty() : Optional.of(p.exitValue());
  }

  synchronized boolean isServing(String id) {
    Process p = processes.get(id);
    return p != null && p.isAlive() && !paused.getOrDefault(id, false);
  }

  /** kill -9: no shutdown hook, no flush beyond what Raft already synced. */
  void kill(String id) {
    Process p;
    synchronized (this) {
      p = processes.remove(id);
      paused.remove(id);
    }
    if (p == null) {
      return;
    }
    p.destroyForcibly();
    try {
      p.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    log.info("killed " + id + " (kill -9, pid " + p.pid() + ")");
  }

  /**
   * SIGTERM, as systemd or an operator stops a node: it shuts down cleanly (snapshot, close) and
   * exits.
   */
  void stop(String id, Duration timeout) throws InterruptedException {
    Process p;
    synchronized (this) {
      p = processes.get(id);
    }
    if (p == null) {
      return;
    }
    p.destroy();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new DrillException(
          id
              + " did not stop within "
              + timeout.toSeconds()
              + "s of SIGTERM; see "
              + node(id).logFile());
    }
    synchronized (this) {
      processes.remove(id);
      paused.remove(id);
    }
    log.info("stopped " + id + " (SIGTERM, pid " + p.pid() + ", exit " + p.exitValue() + ")");
    if (p.exitValue() != 0) {
      throw new DrillException(
          id + " exited " + p.exitValue() + " on SIGTERM (expected 0); see " + node(id).logFile());
    }
  }

  /**
   * Waits until node {@code id} follows a leader and has applied what that leader had committed
   * when the wait began: the node is back in service, as an operator checks before restarting the
   * next one.
   */
  void awaitCaughtUp(String id, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    try (FencingClient client = FencingClient.connect(clientConfig(), "drill-catch-up")) {
      long target = -1;
      while (System.nanoTime() < deadline) {
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

  /** Resumes paused nodes and kills every node this drill started. */
  @Override
  public void close() {
    List<String> ids;
    synchronized (this) {
      ids = new ArrayList<>(processes.keySet());
    }
    for (String id : ids) {
      Optional<Long> pid = pid(id);
      pid.ifPresent(p -> Signals.sendQuietly("CONT", p));
      kill(id);
    }
  }
}
