package dev.fencekeeper.tools;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.server.local.LocalCluster;
import dev.fencekeeper.server.local.LocalClusterBuilder;
import dev.fencekeeper.server.local.NodeCommand;
import dev.fencekeeper.tools.LocalClusterLayout.Node;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

/**
 * The node processes of {@code up}: one JVM per node running {@code fencekeeper server} (the
 * process flavour of {@link LocalCluster}), output appended to its node.log. Reports each node that
 * exits on its own, and stops them all on request.
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
   * The JVM's own statistics sampler (what {@code jstat} reads) once a second instead of 20 times:
   * on an idle node it was its busiest JVM thread after the JIT, about 0.1 % of a core per node
   * (docs/performance-notes.md, idle is idle). Counters that the JVM updates as things happen (a
   * GC, a class loaded) are as fresh as before; only the sampled ones are up to a second old.
   */
  private static final String PERF_SAMPLING = "-XX:PerfDataSamplingInterval=1000";

  /**
   * Both JIT compilers, on every host. On two cores C2 competes with the node for minutes after a
   * start (a third to a half of the three nodes' CPU for the first two minutes of load), so C1
   * alone looks faster at first; but once C2 has settled, after four to five minutes of load, its
   * code needs about a third less CPU per write and W2 at 64 workers did 6,200-8,400 writes/s
   * against 4,500-5,300 with C1 only (docs/performance-notes.md, JIT). A node runs for days; its
   * first minutes should not decide its code.
   */
  public static List<String> nodeJvmFlags() {
    return List.of(HUGE_PAGES, PERF_SAMPLING, EXIT_ON_OUT_OF_MEMORY);
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

  /**
   * The command that runs a node of this JVM's cluster: {@code verb} (which takes {@code --config}
   * and {@code --parent-pid} as {@code server} does) of the command line, on this JVM's class path
   * (the command line's jar, which is all a node needs, and for the bench's baseline nodes the
   * bench's jar after it), with {@link #nodeJvmFlags}, {@link #extraNodeJvmFlags} and the log
   * settings given to this JVM.
   */
  public static NodeCommand nodeCommand(List<String> verb) {
    String java;
    List<String> flags = new ArrayList<>();
    String nodeJavaHome = System.getenv(NODE_JAVA_HOME_VARIABLE);
    if (nodeJavaHome != null && !nodeJavaHome.isBlank()) {
      // Another JDK: this JVM's class archive belongs to this JDK and would not map there.
      java = Path.of(nodeJavaHome, "bin", "java").toString();
    } else {
      java = NodeCommand.thisJava();
      flags.addAll(ClassArchive.childJvmFlags());
    }
    flags.addAll(nodeJvmFlags());
    flags.addAll(extraNodeJvmFlags());
    for (String property : FORWARDED_PROPERTIES) {
      String value = System.getProperty(property);
      if (value != null) {
        flags.add("-D" + property + "=" + value);
      }
    }
    return new NodeCommand(
        List.of(),
        java,
        flags,
        System.getProperty("java.class.path"),
        FencekeeperCli.class.getName(),
        verb);
  }

  /**
   * The cluster of {@code nodes} as {@link LocalClusterLayout} prepared them, each run by {@link
   * #nodeCommand} with {@code verb}, its output appended to its node.log; no node started yet.
   */
  public static LocalCluster localCluster(List<Node> nodes, List<String> verb) {
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("no nodes");
    }
    Map<String, Path> logFiles = new LinkedHashMap<>();
    LocalClusterBuilder builder =
        LocalCluster.builder(nodes.get(0).configFile().toAbsolutePath().getParent())
            .processes(nodeCommand(verb))
            .logFiles(logFiles::get);
    for (Node node : nodes) {
      logFiles.put(node.id(), node.logFile());
      builder.node(ClusterConfig.load(node.configFile()), node.configFile());
    }
    return builder.build();
  }

  private final PrintStream out;
  private final LocalCluster cluster;
  private final Map<Node, Long> pids = new LinkedHashMap<>();
  private final Map<Node, Process> running = new LinkedHashMap<>();
  private final List<Node> exited = new ArrayList<>();
  private final CountDownLatch allExited;
  private volatile boolean stopping;

  private NodeProcesses(List<Node> nodes, PrintStream out, List<String> verb) {
    this.out = out;
    this.cluster = localCluster(nodes, verb);
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
    } catch (UncheckedIOException e) {
      processes.stopAll(Duration.ofSeconds(10));
      throw e.getCause();
    } catch (RuntimeException e) {
      processes.stopAll(Duration.ofSeconds(10));
      throw e;
    }
    return processes;
  }

  private void launch(Node node) {
    cluster.start(node.id());
    Process process = cluster.process(node.id()).orElseThrow();
    synchronized (this) {
      pids.put(node, process.pid());
      running.put(node, process);
    }
    process.onExit().thenRun(() -> onExit(node, process));
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
    try {
      cluster.close(grace);
    } catch (RuntimeException e) {
      out.println("not every node stopped: " + e.getMessage());
      out.flush();
    }
  }
}
