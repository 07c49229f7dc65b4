package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.server.local.LocalCluster;
import dev.fencekeeper.server.local.LocalClusterBuilder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code train-class-archive}: the launcher runs this once per build under {@code
 * -XX:ArchiveClassesAtExit}, so that every later node and command JVM maps the classes it needs
 * from that archive instead of loading and verifying them from the jar. A node JVM spends about a
 * quarter of its start-up CPU on that (2 of 7.5 CPU-seconds when it restarts with 1,000,000 keys;
 * docs/performance-notes.md), and on a two-core machine three nodes starting together share those
 * cores.
 *
 * <p>The training is real use: three nodes in this JVM on free loopback ports, data in a temp dir,
 * and the README's tour of client verbs against them. Whatever the training does not touch still
 * loads from the jar as before; nothing depends on the archive being there.
 */
@Command(
    name = "train-class-archive",
    hidden = true,
    description =
        "Exercise a throwaway in-process cluster so the JVM can archive the classes it loaded.")
final class ClassArchiveTraining implements Callable<Integer> {
  private static final String RESOURCE = "class-archive-training";

  /** Workers of the load phase: as many as the bench's W1 and W2 at their highest concurrency. */
  private static final int LOAD_WORKERS = 64;

  private static final byte[] LOAD_VALUE = new byte[100];

  @Option(
      names = "--load",
      paramLabel = "DURATION",
      defaultValue = "0s",
      converter = DurationConverter.ZeroAllowed.class,
      description =
          "After the tour, this long of fenced writes and lock churn from 64 workers (default:"
              + " none): for an archive that keeps method profiles (JDK 25's ahead-of-time cache),"
              + " the hot paths must have run often enough to be profiled.")
  private Duration load = Duration.ZERO;

  @Option(
      names = "--clients",
      description =
          "Run the nodes in JVMs of their own and only the client verbs in this one: an archive of"
              + " what a client verb loads, a little over half the size of one with the nodes'"
              + " classes, which a client verb's JVM maps and relocates in less time.")
  private boolean clientsOnly;

  private final CliContext context;

  ClassArchiveTraining(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws IOException {
    Path dir = Files.createTempDirectory("fencekeeper-class-archive-");
    LocalCluster cluster = null;
    try {
      LocalClusterBuilder nodes = LocalCluster.builder(dir).metricsPorts(true);
      if (clientsOnly) {
        nodes.processes(NodeProcesses.nodeCommand(List.of("server")));
      }
      cluster = nodes.start();
      String peers =
          cluster.config().peers().stream()
              .map(PeerAddress::address)
              .collect(Collectors.joining(","));
      if (clientsOnly) {
        // The verbs as users run them, against the nodes' client ports.
        cluster.awaitLeader(Duration.ofSeconds(60));
        tour(Map.of(LocalDefaults.ENV_ENDPOINTS, String.join(",", cluster.clientAddresses())));
        return ExitCode.SUCCESS.code();
      }
      Map<String, String> env = Map.of(LocalDefaults.ENV_PEERS, peers);
      tour(env);
      // A restart from a snapshot: the classes that read one are most of what a big node's restart
      // loads.
      verb(env, "snapshot", "create", "--all");
      cluster.stop("n1");
      cluster.start("n1");
      verb(env, "read", RESOURCE, "key");
      if (!load.isZero()) {
        runLoad(peers);
      }
      return ExitCode.SUCCESS.code();
    } finally {
      if (cluster != null) {
        try {
          cluster.close();
        } catch (RuntimeException e) {
          context.err().println("fencekeeper: closing a training node: " + e);
        }
      }
      Directories.deleteTree(dir);
    }
  }

  /** The README's tour of client verbs, each run in this JVM as a user runs it. */
  private void tour(Map<String, String> env) {
    String token =
        verb(env, "lease", "acquire", RESOURCE, "--ttl", "30s", "--owner", "trainer", "-q").trim();
    verb(env, "lease", "show", RESOURCE);
    verb(env, "write", RESOURCE, "key", "value", "--token", token);
    verb(env, "write", RESOURCE, "key", "late", "--token", "1", "--json");
    verb(env, "read", RESOURCE, "key");
    verb(env, "read", RESOURCE, "key", "--json");
    verb(env, "lease", "release", RESOURCE, token);
    verb(env, "status");
    verb(env, "status", "--json");
  }

  /**
   * Half the workers hold a lease and write with its token (the bench's W2), half acquire, write
   * and release (W1), until {@link #load} has passed.
   */
  private void runLoad(String peers) {
    long deadline = System.nanoTime() + load.toNanos();
    AtomicLong accepted = new AtomicLong();
    ExecutorService workers = Executors.newFixedThreadPool(LOAD_WORKERS);
    try (FencingClient client =
        FencingClient.builder().config(ClusterConfig.forPeers(peers)).owner("trainer").build()) {
      List<Future<?>> running = new ArrayList<>();
      for (int i = 0; i < LOAD_WORKERS; i++) {
        String resource = RESOURCE + "-load-" + i;
        boolean churn = i % 2 == 1;
        running.add(
            workers.submit(
                () -> {
                  if (churn) {
                    while (System.nanoTime() < deadline) {
                      try (Lease lease = client.acquire(resource, Duration.ofSeconds(30))) {
                        count(lease.write("key", LOAD_VALUE), accepted);
                      }
                    }
                  } else {
                    try (Lease lease = client.acquire(resource, Duration.ofSeconds(30))) {
                      while (System.nanoTime() < deadline) {
                        count(lease.write("key", LOAD_VALUE), accepted);
                      }
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> worker : running) {
        worker.get(load.toMillis() + 60_000, TimeUnit.MILLISECONDS);
      }
      // Writes that were refused would train the refusal path instead of the hot one.
      if (accepted.get() == 0) {
        throw new IllegalStateException("training load: no write was accepted");
      }
    } catch (ExecutionException e) {
      throw new IllegalStateException("training load failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("training load interrupted", e);
    } catch (TimeoutException e) {
      throw new IllegalStateException("training load did not finish", e);
    } finally {
      workers.shutdownNow();
    }
  }

  private static void count(WriteResult result, AtomicLong accepted) {
    if (result.isAccepted()) {
      accepted.incrementAndGet();
    }
  }

  /**
   * Runs one CLI verb in this JVM against the training cluster; returns what it printed on stdout.
   */
  private String verb(Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream discard =
        new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
    CliContext inProcess =
        new CliContext(
            new PrintStream(out, true, StandardCharsets.UTF_8), discard, env, context.workingDir());
    int code = FencekeeperCli.execute(inProcess, args);
    String printed = out.toString(StandardCharsets.UTF_8);
    if (code != ExitCode.SUCCESS.code() && code != ExitCode.STALE_TOKEN.code()) {
      throw new IllegalStateException(
          "training verb " + String.join(" ", args) + " exited " + code + ": " + printed);
    }
    return printed;
  }
}
