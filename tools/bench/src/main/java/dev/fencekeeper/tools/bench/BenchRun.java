package dev.fencekeeper.tools.bench;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.tools.CliContext;
import dev.fencekeeper.tools.ExitCode;
import dev.fencekeeper.tools.Json;
import dev.fencekeeper.tools.NodeProcesses;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One run of {@code bench}: the clusters it starts or measures, the sweeps of each phase, the
 * optional measurements after them, and the report it prints and writes.
 */
final class BenchRun {
  private final CliContext context;
  private final BenchOptions options;

  BenchRun(CliContext context, BenchOptions options) {
    this.context = context;
    this.options = options;
  }

  /** Runs what the options ask for; returns the exit code. */
  Integer run() throws Exception {
    BenchOptions.Plan plan = options.plan(context);
    List<Workload> chosen = plan.workloads();
    List<ClientApi> apis = plan.apis();
    List<Integer> concurrencies = plan.concurrencies();
    List<Phase> phases = plan.phases();
    PrintStream progress = context.err();
    String runId = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    ClusterConfig described = options.runningCluster(progress::println).orElse(null);
    boolean mainCluster =
        !chosen.isEmpty()
            || (described == null && options.failoverTrials > 0)
            || options.costCurve
            || options.nodeW2
            || options.manyLeases > 0
            || !options.idle.isZero();
    BenchCluster cluster =
        described != null
            ? BenchCluster.external(described)
            : mainCluster ? BenchCluster.startLocal(BenchCluster.Kind.FENCEKEEPER) : null;
    if (cluster == null) {
      // Only clusters of their own (--state-keys, --snapshot-load); their nodes run the settings
      // of ClusterConfig.local.
      BenchReport report =
          new BenchReport(
              BenchCommandLine.of(options),
              ClusterConfig.local(ClusterConfig.DEFAULT_BASE_PORT),
              "3 fencekeeper node processes on 127.0.0.1 started by the bench (data in a temp dir,"
                  + " fsync on; node JVM flags "
                  + nodeJvmFlags()
                  + ")");
      measureState(report, plan, runId, progress);
      return finish(report, progress);
    }
    String description =
        cluster.isLocal()
            ? "3 fencekeeper node processes on 127.0.0.1 started by the bench (data in a temp dir,"
                + " fsync on; node JVM flags "
                + nodeJvmFlags()
                + "), "
                + options.clients
                + " FencingClient(s) in the bench process (JVM flags "
                + benchJvmFlags()
                + ")"
            : "the running cluster at "
                + (options.endpoints != null ? options.endpoints : options.peers)
                + ", "
                + options.clients
                + " FencingClient(s) (bench JVM flags "
                + benchJvmFlags()
                + ")";
    BenchReport report =
        new BenchReport(BenchCommandLine.of(options), cluster.config(), description);
    report.phases = phases;
    report.apis = apis;
    report.ratePerSecond = options.ratePerSecond();
    report.histogramLogs = options.histogramLogs == null ? null : options.histogramLogs.toString();
    if (phases.contains(Phase.COLD)) {
      report.coldWarmup = options.coldWarmup;
    }
    RatisBaseline baselineRun = null;
    JitWarmup jit = new JitWarmup(options.jitWarmup, options.clients);
    AnchorRun anchors = null;
    try {
      if (plan.baselines().contains(AnchorRun.RATIS)) {
        if (chosen.stream().noneMatch(Baseline::covers)) {
          progress.println(
              "bench: --baseline ratis has nothing to compare: it covers W2 and W4 only");
        } else {
          baselineRun = new RatisBaseline(options.clients, options.timing.duration, jit);
        }
      }
      Duration leaseTtl = options.timing.warmup.plus(options.timing.duration).plusSeconds(60);
      anchors = AnchorRun.start(plan.baselines(), options.clients, progress);
      List<FencingClient> fencing = new ArrayList<>();
      for (int i = 0; i < options.clients; i++) {
        fencing.add(FencingClient.builder().config(cluster.config()).owner("bench").build());
      }
      try {
        awaitReady(fencing.get(0), runId);
        Runner.Probe probe =
            new Runner.Probe() {
              @Override
              public List<Long> serverPids() {
                return cluster.serverPids(fencing.get(0));
              }

              @Override
              public long term() {
                return cluster.term(fencing.get(0));
              }

              @Override
              public long appliedIndex() {
                return cluster.appliedIndex(fencing.get(0));
              }
            };
        BenchSweep sweep =
            new BenchSweep(
                options,
                report,
                chosen,
                apis,
                concurrencies,
                fencing,
                probe,
                baselineRun,
                anchors,
                runId,
                options.histogramLogs == null ? null : context.resolve(options.histogramLogs));
        if (!options.idle.isZero()) {
          progress.println(
              "bench: idle clusters: CPU over "
                  + options.idle.toSeconds()
                  + " s with no load, after "
                  + IdleCpu.SETTLE.toSeconds()
                  + " s quiet");
          progress.flush();
          java.util.Map<String, java.util.function.Supplier<List<Long>>> members =
              new java.util.LinkedHashMap<>();
          members.put(BenchReport.FENCEKEEPER, probe::serverPids);
          members.putAll(anchors.members());
          report.idle.addAll(IdleCpu.measure(members, options.idle));
          for (IdleCpu.Figures f : report.idle) {
            progress.printf(
                "bench: idle %s: %.1f %% of a core (three members)%n",
                f.system(), f.percentOfCore());
          }
        }
        if (phases.contains(Phase.COLD)) {
          sweep.run(Phase.COLD, progress);
        }
        if (phases.contains(Phase.SETTLED)) {
          if (cluster.isLocal()) {
            report.jitWarmup = jit.run(progress, report, sweep::jitWarmupWorkers, probe);
          }
          if (baselineRun != null) {
            baselineRun.warmUp(progress);
          }
          AnchorRun warming = anchors;
          warming.warmUp(
              leaseTtl,
              (system, roundWorkers, anchorProbe) ->
                  jit.run(progress, null, roundWorkers, anchorProbe));
          sweep.run(Phase.SETTLED, progress);
        }
        if (options.costCurve) {
          report.costCurve = new CostCurve.Figures(sweep.costCurveWorkers(progress), List.of());
        }
        if (options.nodeW2) {
          progress.println("bench: W2 through the Java client and the Node client, alternating");
          report.nodeW2 =
              NodeW2.measure(
                  fencing.get(0),
                  cluster.config(),
                  plan.nodeClientDir(),
                  plan.nodeVersion(),
                  probe,
                  options.timing.warmup,
                  options.timing.duration,
                  runId,
                  progress);
        }
        if (options.manyLeases > 0) {
          report.manyLeases =
              ManyLeases.measure(
                  cluster.config(),
                  probe,
                  options.manyLeases,
                  plan.maxConcurrency(),
                  options.timing.warmup,
                  options.timing.duration,
                  runId,
                  progress);
        }
        if (cluster.isLocal() && options.failoverTrials > 0) {
          report.leaderKills.addAll(
              Failover.leaderKills(
                  cluster, fencing.get(0), runId, options.failoverTrials, progress));
          report.deadHolders.addAll(
              Failover.deadHolders(
                  cluster, fencing.get(0), runId, options.failoverTrials, progress));
          report.anchorLeaderKills.putAll(
              anchors.leaderKills(runId, options.failoverTrials, progress));
        }
      } finally {
        fencing.forEach(FencingClient::close);
      }
    } finally {
      if (baselineRun != null) {
        baselineRun.close();
      }
      if (anchors != null) {
        anchors.close();
      }
      cluster.close();
    }
    measureState(report, plan, runId, progress);
    return finish(report, progress);
  }

  /**
   * The figures of clusters of their own, after the main cluster is gone: --state-keys, the cost
   * curve's state sizes and --snapshot-load.
   */
  private void measureState(
      BenchReport report, BenchOptions.Plan plan, String runId, PrintStream progress)
      throws Exception {
    if (options.stateKeys > 0) {
      report.state = StateSize.measure(options.stateKeys, runId, progress);
    }
    if (options.snapshotLoad) {
      report.snapshotLoad =
          SnapshotLoad.measure(
              options.stateKeys > 0 ? options.stateKeys : SnapshotLoad.DEFAULT_KEYS,
              plan.maxConcurrency(),
              options.snapshotEvery,
              options.timing.warmup,
              options.timing.duration,
              runId + "-snapshots",
              progress);
    }
    if (options.costCurve) {
      List<StateSize.Figures> states = new ArrayList<>();
      for (int keys : plan.curveKeys()) {
        progress.printf("bench: cost curve: %,d keys%n", keys);
        states.add(
            keys == options.stateKeys && report.state != null
                ? report.state
                : StateSize.measure(keys, runId + "-curve" + keys, progress));
      }
      List<CostCurve.WorkerPoint> workers =
          report.costCurve == null ? List.of() : report.costCurve.workers();
      report.costCurve = new CostCurve.Figures(workers, states);
    }
  }

  private Integer finish(BenchReport report, PrintStream progress) throws IOException {
    report.loadAtEnd = BenchReport.loadAverage();
    Path file = options.output == null ? null : context.resolve(options.output);
    if (file != null) {
      Path chart = CostCurve.chartFor(file);
      if (report.costCurve != null) {
        CostCurve.draw(report.costCurve, chart);
        progress.println("bench: wrote " + chart);
      }
      if (Files.isRegularFile(chart)) {
        // Without --cost-curve, the chart an earlier run drew beside the document stays linked.
        report.costCurveImage = chart.getFileName().toString();
      }
    }
    if (options.json) {
      Json.print(context.out(), report.toJson());
    } else {
      report.tables().forEach(context.out()::println);
      context.out().flush();
    }
    if (file != null) {
      String kept = BenchReport.preservedSection(file);
      if (file.getParent() != null) {
        Files.createDirectories(file.getParent());
      }
      Files.writeString(file, report.document(kept));
      progress.println("bench: wrote " + file);
    }
    var failure = report.w3Failure();
    if (failure.isPresent()) {
      progress.println("bench: FAILED: " + failure.get());
      return ExitCode.CHECK_FAILED.code();
    }
    return ExitCode.SUCCESS.code();
  }

  /** The flags that change what is measured: the nodes' (NodeProcesses.nodeJvmFlags). */
  private static String nodeJvmFlags() {
    return "`" + NodeProcesses.describeNodeJvm() + "`";
  }

  /**
   * This JVM's -XX flags (the launcher's choice and FENCEKEEPER_JAVA_OPTS), without the class
   * archive's path.
   */
  private static String benchJvmFlags() {
    String flags =
        java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(a -> a.startsWith("-XX:") && !a.startsWith("-XX:SharedArchiveFile="))
            .collect(java.util.stream.Collectors.joining(" "));
    return flags.isEmpty() ? "none" : "`" + flags + "`";
  }

  static void progress(PrintStream out, Phase phase, Measurement m) {
    out.printf(
        "bench: %s %s %s x%d: %.0f %s/s, p50 %.2f ms, p99 %.2f ms, %d failed%s%s%n",
        phase.label(),
        m.system(),
        m.workload(),
        m.concurrency(),
        m.opsPerSecond(),
        m.workload().unit,
        m.percentileMs(50),
        m.percentileMs(99),
        m.failed(),
        m.staleAccepted() > 0 ? ", " + m.staleAccepted() + " STALE WRITES ACCEPTED" : "",
        m.failures().isEmpty() ? "" : " (all steps, warm-up included: " + m.failures() + ")");
    out.flush();
  }

  /** The cluster answers a command: a leader is elected and its takeover entry committed. */
  private static void awaitReady(FencingClient client, String runId) throws InterruptedException {
    // As long as an anchor may take: a loaded machine starts three node JVMs slowly.
    long deadline = System.nanoTime() + Anchor.READY_TIMEOUT.toNanos();
    String resource = "bench/" + runId + "/ready";
    while (true) {
      Result r = client.acquireToken(resource, Duration.ofSeconds(1), "bench");
      if (r.code() == ResultCode.GRANTED) {
        client.release(resource, r.token());
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "the cluster did not grant a lease within "
                + Anchor.READY_TIMEOUT.toSeconds()
                + " s: "
                + r);
      }
      Thread.sleep(200);
    }
  }
}
