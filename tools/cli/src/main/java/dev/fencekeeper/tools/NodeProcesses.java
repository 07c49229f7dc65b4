package dev.fencekeeper.tools;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.tools.LocalClusterLayout.Node;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The node processes of {@code up}: one JVM per node running {@code fencekeeper server}, output
 * appended to its node.log. Reports each node that exits on its own, and stops them all on request.
 */
public final class NodeProcesses {
  /**
   * System properties passed on to the nodes, so a log setting given to `up` applies to them too.
   */
  private static final List<String> FORWARDED_PROPERTIES =
      List.of("logback.configurationFile", ServerCommand.LOG_LEVEL_PROPERTY);

  /**
   * Transparent huge pages for the heap (Linux, in `madvise` mode as most distributions ship it): a
   * node that loads a large state faults its heap in 2 MiB pages instead of 4 KiB ones. Restarting
   * with 1,000,000 keys took 5.7-5.9 CPU-seconds without and 4.9-5.1 with
   * (docs/performance-notes.md); where the kernel has no THP the JVM notes it in the node log and
   * carries on.
   */
  private static final String HUGE_PAGES = "-XX:+UseTransparentHugePages";

  /**
   * Both JIT compilers, on every host. On two cores C2 competes with the node for minutes after a
   * start (a third to a half of the three nodes' CPU for the first two minutes of load), so C1
   * alone looks faster at first; but once C2 has settled, after four to five minutes of load, its
   * code needs about a third less CPU per write and W2 at 64 workers did 6,200-8,400 writes/s
   * against 4,500-5,300 with C1 only (docs/performance-notes.md, JIT). A node runs for days; its
   * first minutes should not decide its code.
   */
  public static List<String> nodeJvmFlags() {
    return List.of(HUGE_PAGES, EXIT_ON_OUT_OF_MEMORY);
  }

  /** A node out of memory is in no state to serve: it exits, and {@code up} reports its exit. */
  private static final String EXIT_ON_OUT_OF_MEMORY = "-XX:+ExitOnOutOfMemoryError";

  /**
   * Extra JVM flags for every node this JVM starts (space-separated), after {@link #nodeJvmFlags}:
   * for profiling a node ({@code -XX:+PrintCompilation}, {@code -Xlog:class+load}) or trying a flag
   * in the bench without a rebuild.
   */
  public static final String NODE_JAVA_OPTS_VARIABLE = "FENCEKEEPER_NODE_JAVA_OPTS";

  /**
   * The JDK every node this JVM starts runs on, when not this JVM's own (the launcher sets it only
   * to a JDK 25 or later, whose own class archive, the ahead-of-time cache, it passes in {@value
   * #NODE_JAVA_OPTS_VARIABLE}).
   */
  public static final String NODE_JAVA_HOME_VARIABLE = "FENCEKEEPER_NODE_JAVA_HOME";

  /** The flags of {@value #NODE_JAVA_OPTS_VARIABLE}, none when it is unset. */
  public static List<String> extraNodeJvmFlags() {
    String opts = System.getenv(NODE_JAVA_OPTS_VARIABLE);
    if (opts == null || opts.isBlank()) {
      return List.of();
    }
    return List.of(opts.trim().split("\\s+"));
  }

  /**
   * The JVM flags a node starts with, and the JDK when it is not this JVM's, for a report: e.g.
   * {@code -XX:+UseTransparentHugePages -XX:AOTCache=… (JDK /usr/lib/jvm/jdk-25)}.
   */
  public static String describeNodeJvm() {
    List<String> flags = new ArrayList<>(nodeJvmFlags());
    flags.addAll(extraNodeJvmFlags());
    String nodeJavaHome = System.getenv(NODE_JAVA_HOME_VARIABLE);
    return String.join(" ", flags)
        + (nodeJavaHome == null || nodeJavaHome.isBlank() ? "" : " (JDK " + nodeJavaHome + ")");
  }

  private final PrintStream out;
  private final List<String> verb;
  private final Map<Node, Long> pids = new LinkedHashMap<>();
  private final Map<Node, Process> running = new LinkedHashMap<>();
  private final List<Node> exited = new ArrayList<>();
  private final CountDownLatch allExited;
  private volatile boolean stopping;

  private NodeProcesses(List<Node> nodes, PrintStream out, List<String> verb) {
    this.out = out;
    this.verb = List.copyOf(verb);
    this.allExited = new CountDownLatch(nodes.size());
  }

  /**
   * Starts every node; if one cannot even be launched, the ones already started are stopped again.
   */
  static NodeProcesses start(List<Node> nodes, PrintStream out) throws IOException {
    return start(nodes, out, List.of("server"));
  }

  /**
   * As {@link #start(List, PrintStream)}, running the verb {@code verb} (which takes {@code
   * --config} and {@code --parent-pid} as {@code server} does) instead of {@code server}: the
   * bench's baseline nodes.
   */
  public static NodeProcesses start(List<Node> nodes, PrintStream out, List<String> verb)
      throws IOException {
    NodeProcesses processes = new NodeProcesses(nodes, out, verb);
    try {
      for (Node node : nodes) {
        processes.launch(node);
      }
    } catch (IOException | RuntimeException e) {
      processes.stopAll(Duration.ofSeconds(10));
      throw e;
    }
    return processes;
  }

  private void launch(Node node) throws IOException {
    Files.createDirectories(node.storageDir());
    List<String> command = new ArrayList<>();
    String nodeJavaHome = System.getenv(NODE_JAVA_HOME_VARIABLE);
    if (nodeJavaHome != null && !nodeJavaHome.isBlank()) {
      // Another JDK: this JVM's class archive belongs to this JDK and would not map there.
      command.add(Path.of(nodeJavaHome, "bin", "java").toString());
    } else {
      command.add(javaBinary());
      command.addAll(ClassArchive.childJvmFlags());
    }
    command.addAll(nodeJvmFlags());
    command.addAll(extraNodeJvmFlags());
    for (String property : FORWARDED_PROPERTIES) {
      String value = System.getProperty(property);
      if (value != null) {
        command.add("-D" + property + "=" + value);
      }
    }
    // This JVM's class path: the command line's jar, which is all a node needs (and, for the
    // bench's baseline nodes, the bench's jar after it).
    command.addAll(
        List.of("-cp", System.getProperty("java.class.path"), FencekeeperCli.class.getName()));
    command.addAll(verb);
    command.addAll(
        List.of(
            "--config",
            node.configFile().toString(),
            "--parent-pid",
            Long.toString(ProcessHandle.current().pid())));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(node.logFile().toFile()));
    // The node's config file is complete: a FENCEKEEPER_<KEY> variable of this shell
    // (FENCEKEEPER_PEERS for the client verbs, say) must not override it in the node.
    builder.environment().keySet().removeAll(ClusterConfig.environmentVariables());
    Process process = builder.start();
    synchronized (this) {
      pids.put(node, process.pid());
      running.put(node, process);
    }
    process.onExit().thenRun(() -> onExit(node, process));
  }

  private static String javaBinary() {
    return ProcessHandle.current()
        .info()
        .command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
  }

  /** The pid the node was started with, whether or not it is still running. */
  public synchronized long pid(Node node) {
    return pids.get(node);
  }

  public synchronized Map<Node, Process> running() {
    return Map.copyOf(running);
  }

  private void onExit(Node node, Process process) {
    String survivors;
    synchronized (this) {
      running.remove(node);
      exited.add(node);
      survivors = describeSurvivors();
    }
    if (!stopping) {
      out.println(
          "node "
              + node.id()
              + " (pid "
              + process.pid()
              + ") exited with code "
              + process.exitValue()
              + "; "
              + survivors);
      out.flush();
    }
    allExited.countDown();
  }

  private String describeSurvivors() {
    List<String> ids = running.keySet().stream().map(Node::id).collect(Collectors.toList());
    int total = running.size() + exited.size();
    int majority = total / 2 + 1;
    if (ids.isEmpty()) {
      return "no node is left running";
    }
    if (ids.size() >= majority) {
      return String.join(", ", ids) + (ids.size() == 1 ? " keeps" : " keep") + " serving";
    }
    return String.join(", ", ids)
        + " cannot serve without a majority ("
        + majority
        + " of "
        + total
        + ")";
  }

  /** True once {@link #stopAll} has begun: exits from then on are expected, not news. */
  boolean isStopping() {
    return stopping;
  }

  /** Blocks until every node has exited, by itself or through {@link #stopAll}. */
  void awaitAllExited() throws InterruptedException {
    allExited.await();
  }

  /**
   * SIGTERM to every node, a kill for any still running after {@code grace}. Returns once all are
   * gone (or the kill, too, has had a few seconds).
   */
  public void stopAll(Duration grace) {
    stopping = true;
    Map<Node, Process> toStop = running();
    toStop.values().forEach(Process::destroy);
    long deadline = System.nanoTime() + grace.toNanos();
    for (Process p : toStop.values()) {
      waitFor(p, deadline - System.nanoTime());
    }
    for (Process p : toStop.values()) {
      if (p.isAlive()) {
        p.destroyForcibly();
        waitFor(p, TimeUnit.SECONDS.toNanos(5));
      }
    }
  }

  private static void waitFor(Process p, long nanos) {
    try {
      p.waitFor(Math.max(0, nanos), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
