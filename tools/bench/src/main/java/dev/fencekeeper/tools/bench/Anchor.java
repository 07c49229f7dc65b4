package dev.fencekeeper.tools.bench;

import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.tools.Directories;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A system fencekeeper is compared with in the same run ({@code --baseline zookeeper,etcd}): a
 * three-member cluster on loopback, started from its Debian package under a temp dir, and the
 * bench's workloads done the way that system's users do them. Each member is a process of its own
 * that the bench can kill -9 and restart.
 */
abstract class Anchor implements AutoCloseable {
  /** The anchors the bench knows, by the name {@code --baseline} takes. */
  enum Kind {
    ZOOKEEPER(BenchReport.ZOOKEEPER, "ZooKeeper 3.8", "zookeeper", ZooKeeperAnchor.JAR),
    ZOOKEEPER_CURATOR(
        BenchReport.ZOOKEEPER_CURATOR, "ZooKeeper 3.8", "zookeeper", ZooKeeperAnchor.JAR),
    ETCD(BenchReport.ETCD, "etcd 3.4", "etcd-server", EtcdAnchor.BINARY);

    final String system;
    final String title;
    final String debianPackage;
    final Path installed;

    Kind(String system, String title, String debianPackage, Path installed) {
      this.system = system;
      this.title = title;
      this.debianPackage = debianPackage;
      this.installed = installed;
    }

    static Optional<Kind> named(String name) {
      for (Kind k : values()) {
        if (k.system.equals(name)) {
          return Optional.of(k);
        }
      }
      return Optional.empty();
    }

    /**
     * Refuses, before anything starts, an anchor whose package is not installed, saying how to
     * install it.
     */
    void requireInstalled() {
      requireInstalled(installed);
    }

    void requireInstalled(Path file) {
      if (!Files.isRegularFile(file)) {
        throw new ConfigException(
            "--baseline "
                + system
                + " needs "
                + title
                + " from the Debian package `"
                + debianPackage
                + "` ("
                + file
                + " is missing): install it with `apt-get install "
                + debianPackage
                + "`");
      }
    }

    /** Starts the three members and {@code clients} clients the workers share round-robin. */
    Anchor start(int clients) throws IOException, InterruptedException {
      requireInstalled();
      Path dir = Files.createTempDirectory("fencekeeper-bench-" + system + "-");
      Anchor anchor =
          switch (this) {
            case ZOOKEEPER -> new ZooKeeperAnchor(dir, ZooKeeperAnchor.Recipe.MULTI);
            case ZOOKEEPER_CURATOR -> new ZooKeeperAnchor(dir, ZooKeeperAnchor.Recipe.CURATOR);
            case ETCD -> new EtcdAnchor(dir);
          };
      try {
        anchor.startMembers();
        anchor.connect(clients);
        anchor.awaitWritable(READY_TIMEOUT);
      } catch (IOException | InterruptedException | RuntimeException e) {
        anchor.close();
        throw e;
      }
      return anchor;
    }
  }

  /**
   * How long a cluster may take to elect and serve: on a loaded two-core machine a second ZooKeeper
   * ensemble's three JVMs took over a minute.
   */
  static final Duration READY_TIMEOUT = Duration.ofSeconds(180);

  final Path dir;
  private final Map<String, List<String>> commands = new LinkedHashMap<>();
  private final Map<String, Process> members = new LinkedHashMap<>();

  Anchor(Path dir) {
    this.dir = dir;
  }

  /** The system's name in the report: one of {@link BenchReport#ANCHORS}. */
  abstract String system();

  /** Whether this anchor has an idiomatic equivalent of {@code workload}. */
  abstract boolean covers(Workload workload);

  /**
   * A worker of {@code workload}, number {@code index} of {@code concurrency}, in run {@code
   * runId}.
   */
  abstract Worker worker(
      Workload workload, String runId, int index, int concurrency, Duration leaseTtl);

  /**
   * A contender for W6's one shared resource in hand-off run {@code runId} at {@code waiters}, for
   * an anchor that {@link #covers} W6.
   */
  HandOff.Contender contender(String runId, int waiters) {
    throw new UnsupportedOperationException(system() + " has no blocking lock in the bench");
  }

  /** The member that says it leads, or empty when none does (an election, or none answers). */
  abstract Optional<String> leader();

  /** Whether member {@code id} answers as part of a cluster with a leader. */
  abstract boolean serving(String id);

  /** Writes the members' configuration and launches them. */
  abstract void startMembers() throws IOException;

  /** Opens the clients the workers share. */
  abstract void connect(int clients) throws IOException, InterruptedException;

  /** Waits until a write through the client commits. */
  abstract void awaitWritable(Duration timeout) throws InterruptedException;

  /** The clients' sessions and connections; the members are stopped by {@link #close}. */
  abstract void closeClients();

  /**
   * Starts member {@code id} with {@code command}, its output in its own log file under the temp
   * dir.
   */
  final void launch(String id, List<String> command) throws IOException {
    commands.put(id, List.copyOf(command));
    Path log = dir.resolve(id + ".log");
    Process p =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    members.put(id, p);
  }

  final List<String> memberIds() {
    return List.copyOf(members.keySet());
  }

  final List<Long> serverPids() {
    List<Long> pids = new ArrayList<>();
    members.values().stream().filter(Process::isAlive).forEach(p -> pids.add(p.pid()));
    return pids;
  }

  final Runner.Probe probe() {
    return new Runner.Probe() {
      @Override
      public List<Long> serverPids() {
        return Anchor.this.serverPids();
      }

      @Override
      public long term() {
        return -1; // no term the bench reads alike on every system
      }
    };
  }

  /** kill -9 of member {@code id}; returns once the process is gone. */
  final void kill(String id) {
    Process p = members.get(id);
    p.destroyForcibly();
    try {
      p.onExit().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(system() + " member " + id + " did not die: " + e, e);
    }
  }

  final void restart(String id) throws IOException {
    launch(id, commands.get(id));
  }

  /** Every member serves and one leads; throws after a minute. */
  final void awaitAllServing() throws InterruptedException {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (members.keySet().stream().allMatch(this::serving) && leader().isPresent()) {
        Thread.sleep(1000); // let a restarted member catch up before loading the cluster again
        return;
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(
        "the "
            + system()
            + " cluster did not have all three members serving within "
            + READY_TIMEOUT.toSeconds()
            + " s (logs in "
            + dir
            + ")");
  }

  /** Why a member died during start-up, from the tail of its log; empty while all run. */
  final Optional<String> deadMember() {
    for (var e : members.entrySet()) {
      if (!e.getValue().isAlive()) {
        String tail;
        try {
          List<String> lines = Files.readAllLines(dir.resolve(e.getKey() + ".log"));
          tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
        } catch (IOException ex) {
          tail = "(no log)";
        }
        return Optional.of(
            system()
                + " member "
                + e.getKey()
                + " exited with "
                + e.getValue().exitValue()
                + ":\n"
                + tail);
      }
    }
    return Optional.empty();
  }

  @Override
  public void close() {
    try {
      closeClients();
    } finally {
      for (Process p : members.values()) {
        p.destroy();
      }
      for (Process p : members.values()) {
        try {
          if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
          }
        } catch (InterruptedException e) {
          p.destroyForcibly();
          Thread.currentThread().interrupt();
        }
      }
      Directories.deleteTree(dir);
    }
  }

  /** {@code n} distinct loopback ports that are free right now. */
  static int[] freePorts(int n) throws IOException {
    List<ServerSocket> held = new ArrayList<>();
    try {
      int[] ports = new int[n];
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket();
        held.add(s);
        s.bind(new InetSocketAddress("127.0.0.1", 0));
        ports[i] = s.getLocalPort();
      }
      return ports;
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
  }

  /** The JVM running the bench, for the members that are Java processes. */
  static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
