package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.tools.drill.check.Finding;
import dev.fencekeeper.tools.drill.check.HistoryChecker;
import dev.fencekeeper.tools.drill.check.Verdict;
import dev.fencekeeper.tools.drill.history.History;
import dev.fencekeeper.tools.drill.history.HistoryRecorder;
import dev.fencekeeper.tools.drill.history.Op;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Runs one drill end to end: its own cluster (or {@code --peers}), the recorded workload, the fault
 * schedule, healing, the final linearizable reads, and the check. Cleans up processes whatever
 * happens.
 */
final class DrillRunner {
  private static final Duration LEADER_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration FINAL_READ_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration RECOVERY_TIMEOUT = Duration.ofSeconds(30);
  static final String SENTINEL_RESOURCE = "drill-end";

  record Settings(Duration duration, long seed, int workers, ClusterConfig external) {}

  private final Drill drill;
  private final Settings settings;
  private final DrillLog log;
  private final String nodeMain;

  /** {@code nodeMain}: see {@link DrillCluster#DrillCluster(Path, DrillLog, String)}. */
  DrillRunner(Drill drill, Settings settings, DrillLog log, String nodeMain) {
    this.drill = drill;
    this.settings = settings;
    this.log = log;
    this.nodeMain = nodeMain;
  }

  DrillResult run(Path root) throws Exception {
    HistoryRecorder recorder = new HistoryRecorder();
    DrillCluster cluster = new DrillCluster(root, log, nodeMain);
    Thread cleanup =
        new Thread(
            () -> {
              cluster.close();
              drill.tearDown();
            },
            "drill-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    try {
      ClusterConfig config;
      if (settings.external() != null) {
        config = DrillCluster.clientConfig(settings.external());
      } else {
        List<PeerAddress> members = drill.members(cluster, freeLoopbackPeers(4));
        for (DrillCluster.Node node : cluster.nodes()) {
          cluster.start(node.id());
        }
        config = DrillCluster.clientConfig(members);
      }
      try (FencingClient admin = FencingClient.connect(config, "drill-controller")) {
        String leader =
            settings.external() != null ? "(external)" : cluster.awaitLeader(LEADER_TIMEOUT);
        if (settings.external() == null) {
          // Every node, not just a majority: a drill on fewer nodes than it started tests less than
          // it says (a node whose port another process took exits right after it starts).
          for (DrillCluster.Node node : cluster.nodes()) {
            cluster.awaitCaughtUp(node.id(), LEADER_TIMEOUT);
          }
        }
        log.info("cluster ready, leader " + leader + "; data under " + root);
        String suffix =
            settings.external() != null ? "-" + Long.toHexString(System.currentTimeMillis()) : "";
        DrillContext ctx =
            new DrillContext(
                cluster,
                admin,
                recorder,
                log,
                settings.seed(),
                System.nanoTime() + settings.duration().toNanos(),
                suffix);
        long start = ctx.startNanos;
        ctx.note("cluster ready, leader " + leader);
        try (LeaderMonitor monitor = new LeaderMonitor(cluster, config);
            EventWatcher watcher = new EventWatcher(config, recorder);
            Workload workload =
                new Workload(config, recorder, settings.workers(), settings.seed(), suffix)) {
          monitor.start();
          workload.start();
          try {
            drill.inject(ctx);
            awaitRecovery(ctx, recorder);
          } finally {
            ctx.note("workload stopping");
            workload.stop();
            drill.heal(ctx);
          }
          for (Workload.Abandoned a : workload.abandoned()) {
            ctx.deadHolders.add(new DrillContext.DeadHolder(a.resource(), a.token(), a.atNanos()));
          }
          String healedLeader =
              settings.external() != null ? "(external)" : cluster.awaitLeader(LEADER_TIMEOUT);
          ctx.note("faults healed, leader " + healedLeader + "; reading the final state");
          ClusterConfig finalConfig = settings.external() != null ? config : cluster.clientConfig();
          boolean eventsComplete =
              finalReads(finalConfig, recorder, watcher) && !watcher.compacted();
          History history = recorder.history(eventsComplete);
          Verdict checked = new HistoryChecker().check(history);
          List<Finding> findings = new ArrayList<>(ctx.findings);
          findings.addAll(checked.findings());
          Verdict verdict = new Verdict(findings, checked.notes());
          return new DrillResult(
              drill.name(),
              settings,
              history,
              verdict,
              List.copyOf(ctx.marks),
              List.copyOf(ctx.deadHolders),
              List.copyOf(ctx.renewals),
              monitor.leaderships(),
              drill instanceof StaleWriterDrill s ? s.timeline() : List.of(),
              start,
              root);
        }
      }
    } finally {
      cluster.close();
      drill.tearDown();
      try {
        Runtime.getRuntime().removeShutdownHook(cleanup);
      } catch (IllegalStateException e) {
        // Already shutting down: the hook runs anyway.
      }
    }
  }

  /**
   * Keeps the workload running (up to {@link #RECOVERY_TIMEOUT} past the duration) until a write
   * sent after the last fault has been accepted, so every drill measures its recovery instead of
   * ending inside it.
   */
  private void awaitRecovery(DrillContext ctx, HistoryRecorder recorder)
      throws InterruptedException {
    long lastFault =
        ctx.marks.stream()
            .filter(DrillContext.Mark::disruptive)
            .mapToLong(DrillContext.Mark::nanos)
            .max()
            .orElse(Long.MIN_VALUE);
    if (lastFault == Long.MIN_VALUE) {
      return;
    }
    long deadline = System.nanoTime() + RECOVERY_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      boolean recovered =
          recorder.opsSoFar().stream()
              .anyMatch(
                  op -> op.type() == Op.OpType.WRITE && op.ok() && op.invokeNanos() >= lastFault);
      if (recovered) {
        return;
      }
      Thread.sleep(200);
    }
    ctx.note(
        "no write accepted within " + RECOVERY_TIMEOUT.toSeconds() + "s of the duration's end");
  }

  /**
   * Reads every key the workload touched, linearizably, once the faults healed; then takes one more
   * lease and waits for its grant event, so the event stream is known to be complete up to the end.
   */
  private boolean finalReads(ClusterConfig config, HistoryRecorder recorder, EventWatcher watcher)
      throws InterruptedException {
    Set<String> keys = new LinkedHashSet<>();
    for (Op op : recorder.opsSoFar()) {
      if (op.key() != null) {
        keys.add(op.resource() + "\u0000" + op.key());
      }
    }
    try (FencingClient client = FencingClient.connect(config, "final")) {
      RecordedClient c = new RecordedClient(client, recorder, "final");
      long deadline = System.nanoTime() + FINAL_READ_TIMEOUT.toNanos();
      for (String key : keys) {
        String[] rk = key.split("\u0000");
        while (true) {
          Op read = c.read(rk[0], rk[1]);
          if (read.ok()) {
            recorder.markFinalRead(read);
            break;
          }
          if (System.nanoTime() > deadline) {
            log.info("final read of " + rk[0] + "/" + rk[1] + " failed: " + read.code());
            break;
          }
          Thread.sleep(250);
        }
      }
      while (System.nanoTime() < deadline) {
        Op sentinel = c.acquire(SENTINEL_RESOURCE, Duration.ofSeconds(1));
        if (sentinel.ok()) {
          boolean caughtUp =
              watcher.awaitGrant(
                  SENTINEL_RESOURCE, sentinel.result().token(), Duration.ofSeconds(30));
          if (!caughtUp) {
            log.info("the lease-event watch did not catch up with the end of the log");
          }
          return caughtUp;
        }
        Thread.sleep(250);
      }
      return false;
    }
  }

  /** Nodes on loopback ports no other node, cluster or process picking through LocalPorts has. */
  static List<PeerAddress> freeLoopbackPeers(int count) {
    List<PeerAddress> peers = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      peers.add(new PeerAddress("n" + i, "127.0.0.1", LocalPorts.freeNodePort()));
    }
    return peers;
  }
}
