package dev.fencekeeper.tools.bench;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The chosen workloads at each concurrency on fencekeeper, each followed right away by the same
 * measurement on the bare-Ratis baseline and the anchors, in one phase.
 */
final class BenchSweep {
  private final BenchOptions options;
  private final BenchReport report;
  private final List<Workload> chosen;
  private final List<ClientApi> apis;
  private final List<Integer> concurrencies;
  private final List<FencingClient> fencing;
  private final Runner.Probe probe;
  private final RatisBaseline baselineRun;
  private final AnchorRun anchors;
  private final String runId;
  private final Duration leaseTtl;
  private final java.nio.file.Path histogramLogs;

  /** The systems that have had their first cold window: their later ones take --warmup. */
  private final java.util.Set<String> warmedCold = new java.util.HashSet<>();

  BenchSweep(
      BenchOptions options,
      BenchReport report,
      List<Workload> chosen,
      List<ClientApi> apis,
      List<Integer> concurrencies,
      List<FencingClient> fencing,
      Runner.Probe probe,
      RatisBaseline baselineRun,
      AnchorRun anchors,
      String runId,
      java.nio.file.Path histogramLogs) {
    this.options = options;
    this.report = report;
    this.chosen = chosen;
    this.apis = apis;
    this.concurrencies = concurrencies;
    this.fencing = fencing;
    this.probe = probe;
    this.baselineRun = baselineRun;
    this.anchors = anchors;
    this.runId = runId;
    this.histogramLogs = histogramLogs;
    this.leaseTtl =
        options
            .timing
            .warmup
            .plus(options.timing.duration)
            .plus(options.coldWarmup)
            .plusSeconds(60);
  }

  /**
   * The unmeasured load before a window on {@code system}: in the cold phase, --cold-warmup before
   * the system's first window (its cluster's first load), --warmup before the others.
   */
  private Duration warmupFor(Phase phase, String system) {
    return phase == Phase.COLD && warmedCold.add(system)
        ? options.coldWarmup
        : options.timing.warmup;
  }

  /**
   * How a window of {@code system} at {@code w}, {@code c} workers (through {@code path}, for
   * fencekeeper) is paced and where its histogram log goes (--rate, --histogram-logs).
   */
  Runner.Pacing pacing(Phase phase, String system, Workload w, int c, ClientApi path) {
    return new Runner.Pacing(
        options.ratePerSecond(),
        histogramLogs == null
            ? null
            : histogramLogs.resolve(
                phase.label()
                    + "-"
                    + system
                    + "-"
                    + w.name()
                    + (path == null ? "" : "-" + path.label)
                    + "-c"
                    + c
                    + ".hlog"));
  }

  void run(Phase phase, PrintStream progress) throws InterruptedException {
    String id = runId + "-" + phase.label();
    List<Measurement> runs = phase == Phase.COLD ? report.coldRuns : report.runs;
    List<HandOff.Figures> handOffs = phase == Phase.COLD ? report.coldHandOffs : report.handOffs;
    progress.println("bench: " + phase.label() + " phase");
    progress.flush();
    for (Workload w : chosen) {
      for (int c : concurrencies) {
        for (ClientApi path : w.pathsFor(apis)) {
          Measurement m =
              fencekeeper(
                  w,
                  c,
                  id,
                  warmupFor(phase, BenchReport.FENCEKEEPER),
                  path,
                  pacing(phase, BenchReport.FENCEKEEPER, w, c, path));
          runs.add(m);
          BenchRun.progress(progress, phase, m);
        }
        if (baselineRun != null && Baseline.covers(w)) {
          Measurement b =
              baselineRun.measure(
                  w,
                  c,
                  warmupFor(phase, BenchReport.RATIS),
                  pacing(phase, BenchReport.RATIS, w, c, null));
          runs.add(b);
          BenchRun.progress(progress, phase, b);
        }
        for (Measurement a :
            anchors.measure(
                w,
                c,
                id,
                leaseTtl,
                system -> warmupFor(phase, system),
                options.timing.duration,
                system -> pacing(phase, system, w, c, null))) {
          runs.add(a);
          BenchRun.progress(progress, phase, a);
        }
        if (w == Workload.W6 && c >= 2) {
          List<HandOff.Figures> figures = new ArrayList<>();
          figures.add(
              HandOff.measure(
                  BenchReport.FENCEKEEPER,
                  c,
                  i ->
                      HandOff.fencekeeper(
                          fencing.get(i % options.clients), "bench/" + id + "/handoff/c" + c),
                  options.timing.warmup,
                  options.timing.duration));
          figures.addAll(
              anchors.handOffs(c, id, system -> options.timing.warmup, options.timing.duration));
          for (HandOff.Figures h : figures) {
            handOffs.add(h);
            progress.printf(
                "bench: %s %s W6 hand-off x%d: %.0f hand-offs/s, release committed → next"
                    + " holder's first write p50 %.2f ms, p99 %.2f ms, %d failed%n",
                phase.label(),
                h.system(),
                h.waiters(),
                h.handOffsPerSecond(),
                h.percentileMs(50),
                h.percentileMs(99),
                h.failed());
          }
        }
      }
    }
  }

  private Measurement fencekeeper(
      Workload w, int c, String id, Duration warmupBefore, ClientApi path, Runner.Pacing pacing)
      throws InterruptedException {
    return Runner.run(
            BenchReport.FENCEKEEPER,
            w,
            c,
            options.clients,
            () -> {
              List<Worker> workers = new ArrayList<>();
              for (int i = 0; i < c; i++) {
                workers.add(
                    w.worker(
                        fencing.get(i % options.clients),
                        id,
                        i,
                        c,
                        options.leases,
                        leaseTtl,
                        path));
              }
              return workers;
            },
            warmupBefore,
            options.timing.duration,
            probe,
            pacing)
        .withApi(path);
  }

  /**
   * The JIT warm-up's workers of one round: every chosen workload on each of its chosen paths,
   * round-robin.
   */
  List<Worker> jitWarmupWorkers(int round) {
    List<Worker> workers = new ArrayList<>();
    for (int i = 0; i < JitWarmup.WORKERS; i++) {
      Workload w = chosen.isEmpty() ? Workload.W2 : chosen.get(i % chosen.size());
      List<ClientApi> paths = w.pathsFor(apis);
      workers.add(
          w.worker(
              fencing.get(i % options.clients),
              runId + "-jit" + round,
              i,
              JitWarmup.WORKERS,
              JitWarmup.LEASES,
              leaseTtl.plus(JitWarmup.ROUND),
              paths.get(i / Math.max(1, chosen.size()) % paths.size())));
    }
    return workers;
  }

  /** W2 at each of --cost-curve-workers, on the cluster as the sweeps left it. */
  List<CostCurve.WorkerPoint> costCurveWorkers(PrintStream progress) throws InterruptedException {
    List<CostCurve.WorkerPoint> points = new ArrayList<>();
    progress.println("bench: cost curve: W2 at each worker count");
    for (int c : CostCurve.parseCounts("--cost-curve-workers", options.costCurveWorkers, 1, 4096)) {
      Measurement m =
          fencekeeper(
              Workload.W2,
              c,
              runId + "-curve",
              options.timing.warmup,
              Workload.W2.pathsFor(apis).get(0),
              Runner.Pacing.CLOSED);
      BenchRun.progress(progress, Phase.SETTLED, m);
      points.add(new CostCurve.WorkerPoint(c, m.opsPerSecond(), m.percentileMs(99)));
    }
    return points;
  }
}
