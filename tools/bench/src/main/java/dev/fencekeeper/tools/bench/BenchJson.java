package dev.fencekeeper.tools.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.tools.Json;
import dev.fencekeeper.tools.bench.BenchReport.AnchorRatio;
import dev.fencekeeper.tools.bench.BenchReport.Ratio;
import dev.fencekeeper.tools.bench.BenchReport.TargetRow;
import dev.fencekeeper.tools.bench.Failover.DeadHolder;
import dev.fencekeeper.tools.bench.Failover.LeaderKill;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import java.util.List;

/** A bench report as the {@code --json} document: field names are a contract, add freely. */
final class BenchJson {
  private BenchJson() {}

  static ObjectNode of(BenchReport report) {
    ObjectNode root = Json.object();
    root.put("status", report.w3Failure().isPresent() ? "FAILED" : "OK");
    report.w3Failure().ifPresent(f -> root.put("failure", f));
    root.put("command", report.command);
    root.put("started", report.started.toString());
    root.put("cluster", report.clusterDescription);
    ObjectNode machine = root.putObject("machine");
    machine.put("cpu", BenchReport.cpuModel());
    machine.put("cores", Runtime.getRuntime().availableProcessors());
    machine.put("load_average_start", report.loadAtStart);
    machine.put("load_average_end", report.loadAtEnd);
    if (report.jitWarmup != null) {
      root.put("jit_warmup", report.jitWarmup);
    }
    ObjectNode settings = root.putObject("raft_settings");
    report.raftSettings.forEach(settings::put);
    ArrayNode apiNames = root.putArray("apis");
    report.apis.forEach(a -> apiNames.add(a.label));
    ArrayNode phaseNames = root.putArray("phases");
    report.phases.forEach(p -> phaseNames.add(p.label()));
    if (report.coldWarmup != null) {
      root.put("cold_warmup_s", BenchReport.round(report.coldWarmup.toMillis() / 1000.0, 3));
    }
    if (report.ratePerSecond > 0) {
      root.put("rate_per_sec", report.ratePerSecond);
    }
    if (report.histogramLogs != null) {
      root.put("histogram_logs", report.histogramLogs);
    }
    ArrayNode idle = root.putArray("idle");
    for (IdleCpu.Figures f : report.idle) {
      ObjectNode o = idle.addObject();
      o.put("system", f.system());
      o.put("seconds", BenchReport.round(f.seconds(), 3));
      o.put("server_cpu_ms", f.cpuMs());
      o.put("server_jit_ms", f.jitMs());
      o.put("cpu_percent_of_core", BenchReport.round(f.percentOfCore(), 2));
    }
    results(root.putArray("results"), report.runs, Phase.SETTLED);
    results(root.putArray("cold_results"), report.coldRuns, Phase.COLD);
    ArrayNode ratios = root.putArray("baseline_ratios");
    for (Ratio ratio : report.ratios()) {
      ObjectNode r = ratios.addObject();
      r.put("workload", ratio.workload().name());
      r.put("concurrency", ratio.concurrency());
      r.put("fencekeeper_ops_per_sec", BenchReport.round(ratio.fencekeeper(), 1));
      r.put("ratis_ops_per_sec", BenchReport.round(ratio.ratis(), 1));
      r.put("ratio", BenchReport.round(ratio.fencekeeper() / ratio.ratis(), 3));
    }
    handOffs(root.putArray("handoffs"), report.handOffs);
    handOffs(root.putArray("cold_handoffs"), report.coldHandOffs);
    anchorRatios(root.putArray("anchor_ratios"), BenchReport.anchorRatios(report.runs));
    anchorRatios(root.putArray("cold_anchor_ratios"), BenchReport.anchorRatios(report.coldRuns));
    ArrayNode coldTargets = root.putArray("cold_targets");
    for (TargetRow t : report.coldTargetRows()) {
      ObjectNode o = coldTargets.addObject();
      o.put("target", t.what());
      o.put("measured", t.measured());
      o.put("verdict", t.verdict());
      o.put("met", t.met());
    }
    failover(report, root.putObject("failover"));
    if (report.state != null) {
      root.set("state", stateJson(report.state));
    }
    if (report.snapshotLoad != null) {
      root.set("snapshot_load", SnapshotLoad.toJson(report.snapshotLoad));
    }
    if (report.nodeW2 != null) {
      root.set("node_w2", NodeW2.toJson(report.nodeW2));
    }
    if (report.manyLeases != null) {
      root.set("many_leases", ManyLeases.toJson(report.manyLeases));
    }
    if (report.costCurve != null) {
      ObjectNode cost = root.putObject("cost_curve");
      if (report.costCurveImage != null) {
        cost.put("chart", report.costCurveImage);
      }
      ArrayNode workers = cost.putArray("workers");
      for (CostCurve.WorkerPoint w : report.costCurve.workers()) {
        ObjectNode o = workers.addObject();
        o.put("workers", w.workers());
        o.put("ops_per_sec", BenchReport.round(w.opsPerSecond(), 1));
        o.put("p99_ms", BenchReport.round(w.p99Ms(), 3));
      }
      ArrayNode keys = cost.putArray("state");
      for (StateSize.Figures f : report.costCurve.states()) {
        keys.add(stateJson(f));
      }
    }
    return root;
  }

  private static void results(ArrayNode results, List<Measurement> runs, Phase phase) {
    for (Measurement m : runs) {
      ObjectNode r = results.addObject();
      r.put("phase", phase.label());
      r.put("system", m.system());
      r.put("workload", m.workload().name());
      // The client path of a fencekeeper row; null for the other systems.
      r.put("api", m.api() == null ? null : m.api().label);
      r.put("concurrency", m.concurrency());
      r.put("clients", m.clients());
      r.put("ops", m.ops());
      r.put("ops_per_sec", BenchReport.round(m.opsPerSecond(), 1));
      r.put("failed", m.failed());
      r.put("p50_ms", BenchReport.round(m.percentileMs(50), 3));
      r.put("p99_ms", BenchReport.round(m.percentileMs(99), 3));
      r.put("p999_ms", BenchReport.round(m.percentileMs(99.9), 3));
      r.put("max_ms", BenchReport.round(m.maxMs(), 3));
      r.put("client_cpu_ms", m.clientCpuMs());
      r.put("server_cpu_ms", m.serverCpuMs());
      r.put("client_cpu_us_per_op", BenchReport.round(m.cpuMicrosPerOp(m.clientCpuMs()), 1));
      r.put("server_cpu_us_per_op", BenchReport.round(m.cpuMicrosPerOp(m.serverCpuMs()), 1));
      r.put("server_jit_cpu_ms", m.serverJitMs());
      r.put("elections", m.elections());
      r.put("applied_entries", m.appliedEntries());
      ObjectNode failures = r.putObject("failures");
      m.failures().forEach(failures::put);
      if (m.workload() == Workload.W3) {
        r.put("stale_writes", m.stepsTotal());
        r.put("stale_accepted", m.staleAccepted());
        // Over every stale write of the run, warm-up included: safety is not sampled.
        r.put(
            "rejected_pct",
            m.stepsTotal() == 0
                ? 0
                : BenchReport.round(100.0 * (m.stepsTotal() - m.notOkTotal()) / m.stepsTotal(), 3));
      }
    }
  }

  private static void handOffs(ArrayNode handOffRows, List<HandOff.Figures> handOffs) {
    for (HandOff.Figures h : handOffs) {
      ObjectNode o = handOffRows.addObject();
      o.put("system", h.system());
      o.put("waiters", h.waiters());
      o.put("handoffs", h.handOffs());
      o.put("handoffs_per_sec", BenchReport.round(h.handOffsPerSecond(), 1));
      o.put("p50_ms", BenchReport.round(h.percentileMs(50), 3));
      o.put("p99_ms", BenchReport.round(h.percentileMs(99), 3));
      o.put("failed", h.failed());
    }
  }

  private static void anchorRatios(ArrayNode anchorRatios, List<AnchorRatio> ratios) {
    for (AnchorRatio ratio : ratios) {
      ObjectNode r = anchorRatios.addObject();
      r.put("workload", ratio.workload().name());
      r.put("concurrency", ratio.concurrency());
      r.put("fencekeeper_ops_per_sec", BenchReport.round(ratio.fencekeeper().opsPerSecond(), 1));
      r.put("fencekeeper_p99_ms", BenchReport.round(ratio.fencekeeper().percentileMs(99), 3));
      ratio
          .anchors()
          .forEach(
              (system, m) -> {
                String key = system.replace('-', '_'); // zookeeper-curator: zookeeper_curator_...
                r.put(key + "_ops_per_sec", BenchReport.round(m.opsPerSecond(), 1));
                r.put(key + "_p99_ms", BenchReport.round(m.percentileMs(99), 3));
                r.put(
                    "fencekeeper_per_" + key,
                    BenchReport.round(ratio.fencekeeper().opsPerSecond() / m.opsPerSecond(), 3));
              });
    }
  }

  private static void failover(BenchReport report, ObjectNode failover) {
    ArrayNode kills = failover.putArray("leader_kill");
    for (LeaderKill k : report.leaderKills) {
      ObjectNode o = kills.addObject();
      o.put("killed", k.killed());
      o.put("first_write_ms", k.firstWriteMs());
      o.put("all_writers_ms", k.allWritersMs());
      o.put("elections", k.elections());
    }
    ArrayNode holders = failover.putArray("dead_holder");
    for (DeadHolder h : report.deadHolders) {
      ObjectNode o = holders.addObject();
      o.put("ttl_ms", h.ttlMs());
      o.put("regrant_ms", h.regrantMs());
    }
    ObjectNode anchorKills = failover.putObject("anchor_leader_kill");
    report.anchorLeaderKills.forEach(
        (system, list) -> {
          ArrayNode a = anchorKills.putArray(system);
          for (LeaderKill k : list) {
            ObjectNode o = a.addObject();
            o.put("killed", k.killed());
            o.put("first_write_ms", k.firstWriteMs());
            o.put("all_writers_ms", k.allWritersMs());
          }
        });
  }

  private static ObjectNode stateJson(StateSize.Figures state) {
    ObjectNode st = Json.object();
    st.put("keys", state.keys());
    st.put("value_bytes", StateSize.VALUE_BYTES);
    st.put("resources", state.resources());
    st.put("keys_per_write", state.keysPerWrite());
    st.put("load_seconds", BenchReport.round(state.loadSeconds(), 2));
    st.put("restart_read_ms", state.restartReadMs());
    st.put("restart_write_ms", state.restartWriteMs());
    st.put("restart_serving_ms", state.restartServingMs());
    st.put("max_heap_mb", BenchReport.round(BenchReport.mb(state.maxHeapBytes()), 1));
    st.put("max_snapshot_ms", state.maxSnapshotMs());
    ArrayNode nodes = st.putArray("nodes");
    for (StateSize.Node n : state.nodes()) {
      ObjectNode o = nodes.addObject();
      o.put("node", n.id());
      o.put("heap_empty_mb", BenchReport.round(BenchReport.mb(n.heapEmptyBytes()), 1));
      o.put("heap_loaded_mb", BenchReport.round(BenchReport.mb(n.heapLoadedBytes()), 1));
      o.put("heap_restarted_mb", BenchReport.round(BenchReport.mb(n.heapRestartedBytes()), 1));
      o.put("snapshot_ms", n.snapshotMs());
      o.put("snapshot_bytes", n.snapshotBytes());
    }
    return st;
  }
}
