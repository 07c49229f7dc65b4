package dev.fencekeeper.tools.bench;

import static dev.fencekeeper.tools.bench.BenchReport.fmt;
import static dev.fencekeeper.tools.bench.ReportTemplate.model;

import dev.fencekeeper.tools.bench.BenchReport.AnchorRatio;
import dev.fencekeeper.tools.bench.BenchReport.Ratio;
import dev.fencekeeper.tools.bench.Failover.DeadHolder;
import dev.fencekeeper.tools.bench.Failover.LeaderKill;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

/**
 * A bench report's figures as its Markdown templates show them: maps of formatted cells. What the
 * tables say around the figures is in the templates (benchmarks.md.mustache,
 * bench-tables.md.mustache and the sections they include).
 */
final class ReportModel {
  private ReportModel() {}

  /** The model of benchmarks.md.mustache: method, machine, targets, the tables and the summary. */
  static Map<String, Object> document(BenchReport r, String preserved) {
    Map<String, Object> m = tables(r);
    List<String> anchorsRun =
        BenchReport.ANCHORS.stream()
            .filter(
                a ->
                    r.runs.stream().anyMatch(x -> a.equals(x.system()))
                        || r.anchorLeaderKills.containsKey(a))
            .map(BenchReport::title)
            .toList();
    m.putAll(
        model(
            "command",
            r.command,
            "started",
            r.started.toString(),
            "cluster",
            r.clusterDescription,
            "baselines",
            anchorsRun.isEmpty() ? null : String.join(" and ", anchorsRun),
            "raftSettings",
            r.raftSettings.entrySet().stream()
                .map(e -> "`" + e.getKey() + "=" + e.getValue() + "`")
                .collect(Collectors.joining(", ")),
            "apiLeaseFirst",
            r.apis.contains(ClientApi.LEASE),
            "apiAlsoRaw",
            r.apis.contains(ClientApi.RAW),
            "rawTitle",
            ClientApi.RAW.title,
            "apiCompared",
            r.apis.size() < 2
                ? null
                : r.apis.get(0) == ClientApi.LEASE ? "Lease API" : ClientApi.RAW.title,
            "coldRan",
            !r.coldRuns.isEmpty(),
            "rate",
            r.ratePerSecond > 0 ? fmt(r.ratePerSecond, 0) : null,
            "histogramLogs",
            r.histogramLogs,
            "jitWarmup",
            r.jitWarmup,
            "cpu",
            BenchReport.cpuModel(),
            "cores",
            Runtime.getRuntime().availableProcessors(),
            "memory",
            BenchReport.memTotal(),
            "os",
            System.getProperty("os.name") + " " + System.getProperty("os.version"),
            "java",
            System.getProperty("java.version"),
            "loadAtStart",
            r.loadAtStart,
            "loadAtEnd",
            r.loadAtEnd,
            "bothPhases",
            r.bothPhases(),
            "targets",
            BenchTargets.targets(r),
            "coldTargets",
            BenchTargets.coldTargets(r),
            "chart",
            r.costCurveImage,
            "chartFromEarlierRun",
            r.costCurve == null,
            "preservedBegin",
            BenchReport.PRESERVED_BEGIN,
            "preserved",
            preserved == null || preserved.isBlank() ? "(none recorded yet)" : preserved.strip(),
            "preservedEnd",
            BenchReport.PRESERVED_END));
    return m;
  }

  /**
   * The model of bench-tables.md.mustache: one table per workload and phase, the bare-Ratis ratios,
   * the hand-offs and the anchor ratios per phase, failover, state and the optional sections.
   */
  static Map<String, Object> tables(BenchReport r) {
    List<Map<String, Object>> workloadTables = new ArrayList<>();
    for (Workload w : Workload.values()) {
      for (Phase phase : Phase.values()) {
        List<Map<String, Object>> rows =
            r.runs(phase).stream().filter(m -> m.workload() == w).map(ReportModel::row).toList();
        if (!rows.isEmpty()) {
          workloadTables.add(
              model(
                  "name",
                  w.name(),
                  "title",
                  w.title,
                  "unit",
                  w.unit,
                  "suffix",
                  r.phaseSuffix(phase),
                  "description",
                  w.description,
                  "cold",
                  phase == Phase.COLD,
                  "rows",
                  rows));
        }
      }
    }
    List<Map<String, Object>> handOffTables = new ArrayList<>();
    List<Map<String, Object>> anchorTables = new ArrayList<>();
    for (Phase phase : Phase.values()) {
      List<HandOff.Figures> handOffs = phase == Phase.COLD ? r.coldHandOffs : r.handOffs;
      if (!handOffs.isEmpty()) {
        handOffTables.add(
            model(
                "suffix", r.handOffSuffix(phase),
                "rows", handOffs.stream().map(ReportModel::handOff).toList()));
      }
      List<AnchorRatio> ratios = BenchReport.anchorRatios(r.runs(phase));
      if (!ratios.isEmpty()) {
        anchorTables.add(anchorTable(ratios, r.phaseSuffix(phase)));
      }
    }
    List<Ratio> ratios = r.ratios();
    return model(
        "coldWarmupSeconds", r.coldWarmup == null ? "?" : fmt(r.coldWarmup.toMillis() / 1000.0, 0),
        "workloadTables", workloadTables,
        "ratisRatios",
            ratios.isEmpty()
                ? null
                : model("rows", ratios.stream().map(ReportModel::ratisRatio).toList()),
        "handOffTables", handOffTables,
        "anchorTables", anchorTables,
        "idle", idle(r),
        "failover", failover(r),
        "state", r.state == null ? null : state(r.state),
        "snapshotLoad", r.snapshotLoad == null ? null : SnapshotLoad.markdown(r.snapshotLoad),
        "nodeW2", r.nodeW2 == null ? null : NodeW2.markdown(r.nodeW2),
        "manyLeases", r.manyLeases == null ? null : ManyLeases.markdown(r.manyLeases),
        "costCurve", r.costCurve == null ? null : costCurve(r.costCurve));
  }

  private static Map<String, Object> row(Measurement m) {
    return model(
        "system", BenchReport.systemCell(m),
        "workers", m.concurrency(),
        "ops", fmt(m.opsPerSecond(), 0),
        "p50", fmt(m.percentileMs(50), 2),
        "p99", fmt(m.percentileMs(99), 2),
        "p999", fmt(m.percentileMs(99.9), 2),
        "max", fmt(m.maxMs(), 1),
        "failed", failedCell(m),
        "clientCpu", fmt(m.cpuMicrosPerOp(m.clientCpuMs()), 0),
        "serverCpu", fmt(m.cpuMicrosPerOp(m.serverCpuMs()), 0),
        "serverCores", m.serverCpuMs() < 0 ? "?" : fmt(m.serverCpuMs() / 1000.0 / m.seconds(), 2),
        "serverJit", fmt(m.serverJitPercent(), 0),
        "elections", m.elections() < 0 ? "?" : Long.toString(m.elections()));
  }

  private static String failedCell(Measurement m) {
    if (m.workload() == Workload.W3) {
      return m.staleAccepted()
          + " accepted, "
          + (m.stepsTotal() - m.notOkTotal())
          + "/"
          + m.stepsTotal()
          + " rejected";
    }
    if (m.failed() == 0) {
      return "0";
    }
    // The codes, not their counts: the counts include the unmeasured warm-up (JSON `failures` has
    // them).
    String codes =
        m.stepFailureReasons().stream()
            .map(reason -> reason.length() > 40 ? reason.substring(0, 40) + "…" : reason)
            .collect(Collectors.joining(", "));
    return codes.isEmpty() ? Long.toString(m.failed()) : m.failed() + " (" + codes + ")";
  }

  private static Map<String, Object> ratisRatio(Ratio r) {
    return model(
        "workload", r.workload().name(),
        "workers", r.concurrency(),
        "fencekeeper", fmt(r.fencekeeper(), 0),
        "ratis", fmt(r.ratis(), 0),
        "percent", fmt(100 * r.fencekeeper() / r.ratis(), 0));
  }

  private static Map<String, Object> handOff(HandOff.Figures h) {
    return model(
        "system", h.system(),
        "waiters", h.waiters(),
        "perSecond", fmt(h.handOffsPerSecond(), 0),
        "p50", fmt(h.percentileMs(50), 2),
        "p99", fmt(h.percentileMs(99), 2),
        "failed", h.failed());
  }

  private static Map<String, Object> anchorTable(List<AnchorRatio> ratios, String suffix) {
    List<String> columns =
        BenchReport.ANCHORS.stream()
            .filter(a -> ratios.stream().anyMatch(r -> r.anchors().containsKey(a)))
            .toList();
    List<Map<String, Object>> rows = new ArrayList<>();
    for (AnchorRatio r : ratios) {
      List<Map<String, Object>> cells = new ArrayList<>();
      for (String a : columns) {
        Measurement m = r.anchors().get(a);
        cells.add(
            m == null
                ? model("ran", false)
                : model(
                    "ran", true,
                    "opsAndP99", opsAndP99(m),
                    "ratio", fmt(r.fencekeeper().opsPerSecond() / m.opsPerSecond(), 2)));
      }
      rows.add(
          model(
              "workload", r.workload().name(),
              "workers", r.concurrency(),
              "fencekeeper", opsAndP99(r.fencekeeper()),
              "cells", cells));
    }
    List<String> titles = columns.stream().map(BenchReport::title).toList();
    return model(
        "anchorTitles", String.join(", ", titles),
        "suffix", suffix,
        "anchors", titles,
        "rows", rows);
  }

  private static String opsAndP99(Measurement m) {
    return fmt(m.opsPerSecond(), 0) + " (" + fmt(m.percentileMs(99), 2) + ")";
  }

  private static Map<String, Object> idle(BenchReport r) {
    if (r.idle.isEmpty()) {
      return null;
    }
    double fencekeeper =
        r.idle.stream()
            .filter(f -> BenchReport.FENCEKEEPER.equals(f.system()))
            .mapToDouble(IdleCpu.Figures::percentOfCore)
            .findFirst()
            .orElse(Double.NaN);
    List<Map<String, Object>> rows = new ArrayList<>();
    for (IdleCpu.Figures f : r.idle) {
      rows.add(
          model(
              "system", BenchReport.title(f.system()),
              "percent", fmt(f.percentOfCore(), 1),
              "jit", f.jitMs() < 0 ? "?" : fmt(100.0 * f.jitMs() / Math.max(1, f.cpuMs()), 0),
              "ratio", fmt(fencekeeper / f.percentOfCore(), 1)));
    }
    return model(
        "seconds", fmt(r.idle.get(0).seconds(), 0),
        "settleSeconds", IdleCpu.SETTLE.toSeconds(),
        "rows", rows);
  }

  private static Map<String, Object> failover(BenchReport r) {
    if (r.leaderKills.isEmpty() && r.deadHolders.isEmpty() && r.anchorLeaderKills.isEmpty()) {
      return null;
    }
    Map<String, Object> leaderKills = null;
    if (!r.leaderKills.isEmpty()) {
      leaderKills = leaderKills(r.leaderKills);
      leaderKills.putAll(trials("election", r.leaderKills, LeaderKill::elections));
    }
    List<Map<String, Object>> anchorLeaderKills = new ArrayList<>();
    r.anchorLeaderKills.forEach(
        (system, kills) -> {
          Map<String, Object> k = leaderKills(kills);
          k.put("anchor", BenchReport.title(system));
          anchorLeaderKills.add(k);
        });
    Map<String, Object> deadHolders = null;
    if (!r.deadHolders.isEmpty()) {
      deadHolders = trials("regrant", r.deadHolders, DeadHolder::regrantMs);
      deadHolders.put("ttlMs", r.deadHolders.get(0).ttlMs());
    }
    return model(
        "writers", Failover.WRITERS,
        "leaderKills", leaderKills,
        "deadHolders", deadHolders,
        "anchorLeaderKills", anchorLeaderKills);
  }

  private static Map<String, Object> leaderKills(List<LeaderKill> kills) {
    Map<String, Object> m = trials("firstWrite", kills, LeaderKill::firstWriteMs);
    m.putAll(trials("allWriters", kills, LeaderKill::allWritersMs));
    return m;
  }

  /** A failover row's cells: each trial's value and their median. */
  private static <T> Map<String, Object> trials(String name, List<T> trials, ToLongFunction<T> f) {
    return model(
        name + "Trials",
            trials.stream()
                .map(t -> Long.toString(f.applyAsLong(t)))
                .collect(Collectors.joining(", ")),
        name + "Median", BenchReport.median(trials, f));
  }

  private static Map<String, Object> state(StateSize.Figures state) {
    List<Map<String, Object>> nodes = new ArrayList<>();
    for (StateSize.Node n : state.nodes()) {
      nodes.add(
          model(
              "id", n.id(),
              "heapEmpty", mbCell(n.heapEmptyBytes()),
              "heapLoaded", mbCell(n.heapLoadedBytes()),
              "heapRestarted", mbCell(n.heapRestartedBytes()),
              "snapshotMs", n.snapshotMs(),
              "snapshotMb", mbCell(n.snapshotBytes())));
    }
    return model(
        "keys", fmt(state.keys(), 0),
        "valueBytes", StateSize.VALUE_BYTES,
        "loadSeconds", fmt(state.loadSeconds(), 1),
        "keysPerSecond", fmt(state.keys() / state.loadSeconds(), 0),
        "resources", fmt(state.resources(), 0),
        "keysPerWrite", state.keysPerWrite(),
        "nodes", nodes,
        "restartReadMs", state.restartReadMs(),
        "restartWriteMs", state.restartWriteMs());
  }

  private static Map<String, Object> costCurve(CostCurve.Figures costCurve) {
    List<Map<String, Object>> workers = new ArrayList<>();
    for (CostCurve.WorkerPoint p : costCurve.workers()) {
      workers.add(
          model(
              "workers", p.workers(),
              "opsPerSecond", fmt(p.opsPerSecond(), 0),
              "p99", fmt(p.p99Ms(), 2)));
    }
    List<Map<String, Object>> states = new ArrayList<>();
    for (StateSize.Figures f : costCurve.states()) {
      states.add(
          model(
              "keys", fmt(f.keys(), 0),
              "loadSeconds", fmt(f.loadSeconds(), 1),
              "heap", mbCell(f.maxHeapBytes()),
              "snapshot", f.maxSnapshotMs() < 0 ? "?" : fmt(f.maxSnapshotMs() / 1000.0, 2),
              "restart", f.restartServingMs() < 0 ? "?" : fmt(f.restartServingMs() / 1000.0, 2)));
    }
    return model(
        "hasWorkers",
        !workers.isEmpty(),
        "workerPoints",
        workers,
        "hasStates",
        !states.isEmpty(),
        "states",
        states);
  }

  private static String mbCell(long bytes) {
    return bytes < 0 ? "?" : fmt(BenchReport.mb(bytes), 1);
  }
}
