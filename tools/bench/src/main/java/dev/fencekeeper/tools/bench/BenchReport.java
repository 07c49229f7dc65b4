package dev.fencekeeper.tools.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.tools.Json;
import dev.fencekeeper.tools.bench.Failover.DeadHolder;
import dev.fencekeeper.tools.bench.Failover.LeaderKill;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.ratis.conf.RaftProperties;

/**
 * What a bench run found, as JSON ({@code --json}), as Markdown tables (the default output), and as
 * the whole of docs/benchmarks.md ({@code --output}): method, machine, targets and tables are
 * generated; the one hand-written part, the summary between {@link #PRESERVED_BEGIN} and {@link
 * #PRESERVED_END}, is carried over from the file being replaced.
 */
final class BenchReport {
  static final String FENCEKEEPER = "fencekeeper";
  static final String RATIS = "ratis-counter";
  static final String ZOOKEEPER = "zookeeper";
  static final String ETCD = "etcd";

  /** The anchors, in the order of their columns. */
  static final List<String> ANCHORS = List.of(ZOOKEEPER, ETCD);

  static final String PRESERVED_BEGIN =
      "<!-- profile-findings: hand-written, kept by the generator -->";
  static final String PRESERVED_END = "<!-- end of profile-findings -->";

  /** Raft settings worth showing next to the figures: the ones tuning touches. */
  private static final List<String> SHOWN_RAFT_KEYS =
      List.of(
          "raft.server.log.log-metadata.enabled",
          "raft.server.rpc.timeout.min",
          "raft.server.rpc.timeout.max",
          "raft.server.log.appender.buffer.byte-limit",
          "raft.server.log.appender.buffer.element-limit",
          "raft.server.log.write.buffer.size",
          "raft.server.log.force.sync.num",
          "raft.server.read.option",
          "raft.server.leaderelection.leader.step-down.wait-time",
          "raft.server.log.segment.cache.num.max",
          "raft.server.log.segment.cache.size.max");

  final String command;
  final Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
  final String loadAtStart = loadAverage();
  String loadAtEnd = "";

  /** The settled phase's measurements (after the JIT warm-up): the figures of every table. */
  final List<Measurement> runs = new ArrayList<>();

  /**
   * The cold phase's measurements (--phases cold): the same workloads, measured soon after each
   * system's cluster is up, before any JIT warm-up.
   */
  final List<Measurement> coldRuns = new ArrayList<>();

  /** The phases this run measured, in order. */
  List<Phase> phases = List.of(Phase.SETTLED);

  /** Unmeasured load on each system before its first cold window; null when no cold phase ran. */
  java.time.Duration coldWarmup;

  /** The cost curve (--cost-curve); null when not run. */
  CostCurve.Figures costCurve;

  /** The cost curve's chart, as the document links it (relative to the document); or null. */
  String costCurveImage;

  final List<LeaderKill> leaderKills = new ArrayList<>();
  final List<DeadHolder> deadHolders = new ArrayList<>();

  /** W6's hand-off on fencekeeper and each anchor with a blocking lock. */
  final List<HandOff.Figures> handOffs = new ArrayList<>();

  /** W6's hand-off in the cold phase. */
  final List<HandOff.Figures> coldHandOffs = new ArrayList<>();

  /** Leader kills on each anchor (--baseline zookeeper,etcd), by system. */
  final Map<String, List<LeaderKill>> anchorLeaderKills = new LinkedHashMap<>();

  /** How the node JVMs were warmed up before the first workload; null when they were not. */
  String jitWarmup;

  /**
   * Stale writes accepted during the warm-up, whose figures are not kept but whose safety still
   * counts.
   */
  long warmupStaleAccepted;

  /** The --state-keys figures; null when not run. */
  StateSize.Figures state;

  /** The --snapshot-load figures; null when not run. */
  SnapshotLoad.Figures snapshotLoad;

  /**
   * The client paths the fencekeeper workloads were run through (--api), the one the ratios and
   * targets use first.
   */
  List<ClientApi> apis = List.of(ClientApi.LEASE);

  /** The --node-w2 figures; null when not run. */
  NodeW2.Figures nodeW2;

  /** The --many-leases figures; null when not run. */
  ManyLeases.Figures manyLeases;

  final Map<String, String> raftSettings = new LinkedHashMap<>();
  final String clusterDescription;

  BenchReport(String command, ClusterConfig config, String clusterDescription) {
    this.command = command;
    this.clusterDescription = clusterDescription;
    try {
      RaftProperties server = config.withNodeId(config.peers().get(0).id()).serverProperties();
      for (String key : SHOWN_RAFT_KEYS) {
        String value = server.get(key);
        raftSettings.put(key, value == null ? "(Ratis default)" : value);
      }
      raftSettings.put(
          "raft.client.rpc.request.timeout",
          config.clientProperties().get("raft.client.rpc.request.timeout"));
    } catch (RuntimeException e) {
      raftSettings.put("(unknown)", e.getMessage());
    }
  }

  long staleAccepted() {
    return runs.stream().mapToLong(Measurement::staleAccepted).sum();
  }

  /**
   * W3 passes only when every stale write it made was definitely rejected, on every system it ran
   * on: on an anchor too, a stale write accepted means the recipe measured is not a fenced one.
   */
  Optional<String> w3Failure() {
    if (warmupStaleAccepted > 0) {
      return Optional.of(
          "W3 during the JIT warm-up: " + warmupStaleAccepted + " stale writes were ACCEPTED");
    }
    List<Measurement> all = new ArrayList<>(coldRuns);
    all.addAll(runs);
    for (Measurement m : all) {
      if (m.workload() == Workload.W3) {
        String on =
            (FENCEKEEPER.equals(m.system()) ? "" : " on " + m.system())
                + (m.api() == ClientApi.RAW ? " (" + ClientApi.RAW.title + ")" : "")
                + (coldRuns.contains(m) ? " (cold)" : "");
        if (m.staleAccepted() > 0) {
          return Optional.of(
              "W3"
                  + on
                  + " at "
                  + m.concurrency()
                  + " workers: "
                  + m.staleAccepted()
                  + " stale writes were ACCEPTED");
        }
        if (m.stepsTotal() == 0 || m.notOkTotal() > 0) {
          return Optional.of(
              "W3"
                  + on
                  + " at "
                  + m.concurrency()
                  + " workers: "
                  + m.notOkTotal()
                  + " of "
                  + m.stepsTotal()
                  + " stale writes were not definitely rejected ("
                  + (FENCEKEEPER.equals(m.system())
                      ? "STALE_TOKEN"
                      : "refused by the system's token check")
                  + ")");
        }
      }
    }
    return Optional.empty();
  }

  // ---------------------------------------------------------------------------------------------
  // JSON

  ObjectNode toJson() {
    ObjectNode root = Json.object();
    root.put("status", w3Failure().isPresent() ? "FAILED" : "OK");
    w3Failure().ifPresent(f -> root.put("failure", f));
    root.put("command", command);
    root.put("started", started.toString());
    root.put("cluster", clusterDescription);
    ObjectNode machine = root.putObject("machine");
    machine.put("cpu", cpuModel());
    machine.put("cores", Runtime.getRuntime().availableProcessors());
    machine.put("load_average_start", loadAtStart);
    machine.put("load_average_end", loadAtEnd);
    if (jitWarmup != null) {
      root.put("jit_warmup", jitWarmup);
    }
    ObjectNode settings = root.putObject("raft_settings");
    raftSettings.forEach(settings::put);
    ArrayNode apiNames = root.putArray("apis");
    apis.forEach(a -> apiNames.add(a.label));
    ArrayNode phaseNames = root.putArray("phases");
    phases.forEach(p -> phaseNames.add(p.label()));
    if (coldWarmup != null) {
      root.put("cold_warmup_s", round(coldWarmup.toMillis() / 1000.0, 3));
    }
    results(root.putArray("results"), runs, Phase.SETTLED);
    results(root.putArray("cold_results"), coldRuns, Phase.COLD);
    ArrayNode ratios = root.putArray("baseline_ratios");
    for (Ratio ratio : ratios()) {
      ObjectNode r = ratios.addObject();
      r.put("workload", ratio.workload.name());
      r.put("concurrency", ratio.concurrency);
      r.put("fencekeeper_ops_per_sec", round(ratio.fencekeeper, 1));
      r.put("ratis_ops_per_sec", round(ratio.ratis, 1));
      r.put("ratio", round(ratio.fencekeeper / ratio.ratis, 3));
    }
    handOffs(root.putArray("handoffs"), handOffs);
    handOffs(root.putArray("cold_handoffs"), coldHandOffs);
    anchorRatios(root.putArray("anchor_ratios"), anchorRatios(runs));
    anchorRatios(root.putArray("cold_anchor_ratios"), anchorRatios(coldRuns));
    ArrayNode coldTargets = root.putArray("cold_targets");
    for (TargetRow t : coldTargetRows()) {
      ObjectNode o = coldTargets.addObject();
      o.put("target", t.what());
      o.put("measured", t.measured());
      o.put("verdict", t.verdict());
      o.put("met", t.met());
    }
    failover(root.putObject("failover"));
    if (state != null) {
      root.set("state", stateJson(state));
    }
    if (snapshotLoad != null) {
      root.set("snapshot_load", SnapshotLoad.toJson(snapshotLoad));
    }
    if (nodeW2 != null) {
      root.set("node_w2", NodeW2.toJson(nodeW2));
    }
    if (manyLeases != null) {
      root.set("many_leases", ManyLeases.toJson(manyLeases));
    }
    if (costCurve != null) {
      ObjectNode cost = root.putObject("cost_curve");
      if (costCurveImage != null) {
        cost.put("chart", costCurveImage);
      }
      ArrayNode workers = cost.putArray("workers");
      for (CostCurve.WorkerPoint w : costCurve.workers()) {
        ObjectNode o = workers.addObject();
        o.put("workers", w.workers());
        o.put("ops_per_sec", round(w.opsPerSecond(), 1));
        o.put("p99_ms", round(w.p99Ms(), 3));
      }
      ArrayNode keys = cost.putArray("state");
      for (StateSize.Figures f : costCurve.states()) {
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
      r.put("ops_per_sec", round(m.opsPerSecond(), 1));
      r.put("failed", m.failed());
      r.put("p50_ms", round(m.percentileMs(50), 3));
      r.put("p99_ms", round(m.percentileMs(99), 3));
      r.put("p999_ms", round(m.percentileMs(99.9), 3));
      r.put("max_ms", round(m.maxMs(), 3));
      r.put("client_cpu_ms", m.clientCpuMs());
      r.put("server_cpu_ms", m.serverCpuMs());
      r.put("client_cpu_us_per_op", round(m.cpuMicrosPerOp(m.clientCpuMs()), 1));
      r.put("server_cpu_us_per_op", round(m.cpuMicrosPerOp(m.serverCpuMs()), 1));
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
                : round(100.0 * (m.stepsTotal() - m.notOkTotal()) / m.stepsTotal(), 3));
      }
    }
  }

  private static void handOffs(ArrayNode handOffRows, List<HandOff.Figures> handOffs) {
    for (HandOff.Figures h : handOffs) {
      ObjectNode o = handOffRows.addObject();
      o.put("system", h.system());
      o.put("waiters", h.waiters());
      o.put("handoffs", h.handOffs());
      o.put("handoffs_per_sec", round(h.handOffsPerSecond(), 1));
      o.put("p50_ms", round(h.percentileMs(50), 3));
      o.put("p99_ms", round(h.percentileMs(99), 3));
      o.put("failed", h.failed());
    }
  }

  private static void anchorRatios(ArrayNode anchorRatios, List<AnchorRatio> ratios) {
    for (AnchorRatio ratio : ratios) {
      ObjectNode r = anchorRatios.addObject();
      r.put("workload", ratio.workload().name());
      r.put("concurrency", ratio.concurrency());
      r.put("fencekeeper_ops_per_sec", round(ratio.fencekeeper().opsPerSecond(), 1));
      r.put("fencekeeper_p99_ms", round(ratio.fencekeeper().percentileMs(99), 3));
      ratio
          .anchors()
          .forEach(
              (system, m) -> {
                r.put(system + "_ops_per_sec", round(m.opsPerSecond(), 1));
                r.put(system + "_p99_ms", round(m.percentileMs(99), 3));
                r.put(
                    "fencekeeper_per_" + system,
                    round(ratio.fencekeeper().opsPerSecond() / m.opsPerSecond(), 3));
              });
    }
  }

  private void failover(ObjectNode failover) {
    ArrayNode kills = failover.putArray("leader_kill");
    for (LeaderKill k : leaderKills) {
      ObjectNode o = kills.addObject();
      o.put("killed", k.killed());
      o.put("first_write_ms", k.firstWriteMs());
      o.put("all_writers_ms", k.allWritersMs());
      o.put("elections", k.elections());
    }
    ArrayNode holders = failover.putArray("dead_holder");
    for (DeadHolder h : deadHolders) {
      ObjectNode o = holders.addObject();
      o.put("ttl_ms", h.ttlMs());
      o.put("regrant_ms", h.regrantMs());
    }
    ObjectNode anchorKills = failover.putObject("anchor_leader_kill");
    anchorLeaderKills.forEach(
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
    st.put("load_seconds", round(state.loadSeconds(), 2));
    st.put("restart_read_ms", state.restartReadMs());
    st.put("restart_write_ms", state.restartWriteMs());
    st.put("restart_serving_ms", state.restartServingMs());
    st.put("max_heap_mb", round(mb(state.maxHeapBytes()), 1));
    st.put("max_snapshot_ms", state.maxSnapshotMs());
    ArrayNode nodes = st.putArray("nodes");
    for (StateSize.Node n : state.nodes()) {
      ObjectNode o = nodes.addObject();
      o.put("node", n.id());
      o.put("heap_empty_mb", round(mb(n.heapEmptyBytes()), 1));
      o.put("heap_loaded_mb", round(mb(n.heapLoadedBytes()), 1));
      o.put("heap_restarted_mb", round(mb(n.heapRestartedBytes()), 1));
      o.put("snapshot_ms", n.snapshotMs());
      o.put("snapshot_bytes", n.snapshotBytes());
    }
    return st;
  }

  /** Bytes as MB (10^6, as the target counts); -1 stays -1 (unknown). */
  private static double mb(long bytes) {
    return bytes < 0 ? -1 : bytes / 1e6;
  }

  static double round(double v, int digits) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return -1;
    }
    double f = Math.pow(10, digits);
    return Math.round(v * f) / f;
  }

  // ---------------------------------------------------------------------------------------------
  // Markdown

  record Ratio(Workload workload, int concurrency, double fencekeeper, double ratis) {}

  List<Ratio> ratios() {
    List<Ratio> out = new ArrayList<>();
    for (Measurement fk : primary(runs)) {
      if (!FENCEKEEPER.equals(fk.system())) {
        continue;
      }
      for (Measurement base : runs) {
        if (RATIS.equals(base.system())
            && base.workload() == fk.workload()
            && base.concurrency() == fk.concurrency()
            && base.opsPerSecond() > 0) {
          out.add(
              new Ratio(fk.workload(), fk.concurrency(), fk.opsPerSecond(), base.opsPerSecond()));
        }
      }
    }
    return out;
  }

  /**
   * One fencekeeper measurement and the anchors' at the same workload and concurrency (those with
   * ops), by system in {@link #ANCHORS} order.
   */
  record AnchorRatio(
      Workload workload,
      int concurrency,
      Measurement fencekeeper,
      Map<String, Measurement> anchors) {}

  List<AnchorRatio> anchorRatios() {
    return anchorRatios(runs);
  }

  /** The anchor ratios among {@code runs}: one phase's measurements. */
  static List<AnchorRatio> anchorRatios(List<Measurement> runs) {
    List<AnchorRatio> out = new ArrayList<>();
    for (Measurement fk : primary(runs)) {
      if (!FENCEKEEPER.equals(fk.system())) {
        continue;
      }
      Map<String, Measurement> anchors = new LinkedHashMap<>();
      for (String system : ANCHORS) {
        runs.stream()
            .filter(
                m ->
                    system.equals(m.system())
                        && m.workload() == fk.workload()
                        && m.concurrency() == fk.concurrency()
                        && m.ops() > 0)
            .findFirst()
            .ifPresent(m -> anchors.put(system, m));
      }
      if (!anchors.isEmpty()) {
        out.add(new AnchorRatio(fk.workload(), fk.concurrency(), fk, anchors));
      }
    }
    return out;
  }

  /**
   * {@code runs} without the extra client paths: of the fencekeeper rows at one workload and
   * concurrency only the first, taken through the first path of --api, which ratios and targets
   * compare.
   */
  static List<Measurement> primary(List<Measurement> runs) {
    List<Measurement> out = new ArrayList<>();
    for (Measurement m : runs) {
      boolean extra =
          FENCEKEEPER.equals(m.system())
              && out.stream()
                  .anyMatch(
                      k ->
                          FENCEKEEPER.equals(k.system())
                              && k.workload() == m.workload()
                              && k.concurrency() == m.concurrency());
      if (!extra) {
        out.add(m);
      }
    }
    return out;
  }

  /**
   * The system cell of a row: a fencekeeper row of a workload with a choice of paths says when it
   * took the raw token path.
   */
  static String systemCell(Measurement m) {
    return m.api() == ClientApi.RAW && m.workload().hasPathChoice()
        ? m.system() + " (" + ClientApi.RAW.title + ")"
        : m.system();
  }

  /** The anchors that have at least one ratio, in column order. */
  private static List<String> anchorColumns(List<AnchorRatio> ratios) {
    return ANCHORS.stream()
        .filter(a -> ratios.stream().anyMatch(r -> r.anchors().containsKey(a)))
        .toList();
  }

  private static String title(String system) {
    return ZOOKEEPER.equals(system) ? "ZooKeeper" : system;
  }

  private void workloadTable(List<String> lines, Workload w, Phase phase) {
    List<Measurement> rows =
        runs(phase).stream().filter(m -> m.workload() == w).collect(Collectors.toList());
    if (rows.isEmpty()) {
      return;
    }
    lines.add("### " + w.name() + " " + w.title + " (" + w.unit + ")" + phaseSuffix(phase));
    lines.add("");
    lines.add(w.description + "." + (phase == Phase.COLD ? " " + coldNote() : ""));
    lines.add("");
    lines.add(
        "| system | workers | "
            + w.unit
            + "/s | p50 ms | p99 ms | p99.9 ms | max ms | failed |"
            + " client CPU µs/op | server CPU µs/op | server cores | server JIT % | elections |");
    lines.add("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for (Measurement m : rows) {
      lines.add(
          "| "
              + systemCell(m)
              + " | "
              + m.concurrency()
              + " | "
              + fmt(m.opsPerSecond(), 0)
              + " | "
              + fmt(m.percentileMs(50), 2)
              + " | "
              + fmt(m.percentileMs(99), 2)
              + " | "
              + fmt(m.percentileMs(99.9), 2)
              + " | "
              + fmt(m.maxMs(), 1)
              + " | "
              + failedCell(m)
              + " | "
              + fmt(m.cpuMicrosPerOp(m.clientCpuMs()), 0)
              + " | "
              + fmt(m.cpuMicrosPerOp(m.serverCpuMs()), 0)
              + " | "
              + (m.serverCpuMs() < 0 ? "?" : fmt(m.serverCpuMs() / 1000.0 / m.seconds(), 2))
              + " | "
              + fmt(m.serverJitPercent(), 0)
              + " | "
              + (m.elections() < 0 ? "?" : m.elections())
              + " |");
    }
    lines.add("");
  }

  /** Which client path the fencekeeper rows took, for the method. */
  String apiNote() {
    String leaseApi =
        "the Java client's Lease API, as an application calls it (`client.acquire` returns a"
            + " self-renewing `Lease`, then `lease.write`, `lease.close`)";
    String rawPath =
        "the token-level path underneath (`acquireToken`, `write(resource, token, ...)`,"
            + " `release`; nothing renews), marked \""
            + ClientApi.RAW.title
            + "\"";
    StringBuilder note = new StringBuilder();
    if (apis.contains(ClientApi.LEASE)) {
      note.append("W1, W2, W3 and W6 go through ").append(leaseApi);
      if (apis.contains(ClientApi.RAW)) {
        note.append("; W1, W2 and W3 also through ").append(rawPath);
      }
    } else {
      note.append("W1, W2 and W3 take ")
          .append(rawPath)
          .append(
              "; W6 goes through the Lease API (the client has no token-level blocking"
                  + " acquire)");
    }
    if (apis.size() > 1) {
      note.append("; ratios and targets use the ")
          .append(apis.get(0) == ClientApi.LEASE ? "Lease API" : ClientApi.RAW.title)
          .append(" rows (the first path of `--api`)");
    }
    return note.append("; W4 and W5 call the token-level API (`read`, `renew`)").toString();
  }

  /** What a cold row has seen before its window. */
  private String coldNote() {
    return "Cold: each system's first window began after "
        + (coldWarmup == null ? "?" : fmt(coldWarmup.toMillis() / 1000.0, 0))
        + " s of load on its freshly started cluster, with no JIT warm-up; each later row has also"
        + " had the load of the rows before it on that system.";
  }

  /** Both phases ran: each table says which one it shows. */
  private boolean bothPhases() {
    return !coldRuns.isEmpty() && !runs.isEmpty();
  }

  private String phaseSuffix(Phase phase) {
    return bothPhases() || phase == Phase.COLD ? ", " + phase.label() : "";
  }

  private List<Measurement> runs(Phase phase) {
    return phase == Phase.COLD ? coldRuns : runs;
  }

  /**
   * The result tables: one per workload and phase, the baseline ratios, the hand-offs, the anchor
   * ratios per phase, the failover and state figures.
   */
  List<String> tables() {
    List<String> lines = new ArrayList<>();
    for (Workload w : Workload.values()) {
      for (Phase phase : Phase.values()) {
        workloadTable(lines, w, phase);
      }
    }
    List<Ratio> ratios = ratios();
    if (!ratios.isEmpty()) {
      lines.add("### fencekeeper / bare Ratis (same run, same Raft settings)");
      lines.add("");
      lines.add("| workload | workers | fencekeeper ops/s | ratis-counter ops/s | ratio |");
      lines.add("|---|--:|--:|--:|--:|");
      for (Ratio r : ratios) {
        lines.add(
            "| "
                + r.workload.name()
                + " | "
                + r.concurrency
                + " | "
                + fmt(r.fencekeeper, 0)
                + " | "
                + fmt(r.ratis, 0)
                + " | "
                + fmt(100 * r.fencekeeper / r.ratis, 0)
                + " % |");
      }
      lines.add("");
    }
    for (Phase phase : Phase.values()) {
      handOffTable(lines, phase);
    }
    for (Phase phase : Phase.values()) {
      anchorTable(lines, phase);
    }
    if (!leaderKills.isEmpty() || !deadHolders.isEmpty() || !anchorLeaderKills.isEmpty()) {
      lines.add("### Failover");
      lines.add("");
      lines.add("| figure | trials (ms) | median ms |");
      lines.add("|---|---|--:|");
      if (!leaderKills.isEmpty()) {
        leaderKillRows(lines, "", leaderKills);
        lines.add(
            trialsRow(
                "elections per leader kill (term increase)", leaderKills, LeaderKill::elections));
      }
      if (!deadHolders.isEmpty()) {
        lines.add(
            trialsRow(
                "holder process kill -9 (lease TTL "
                    + deadHolders.get(0).ttlMs()
                    + " ms) → resource granted to a waiter",
                deadHolders,
                DeadHolder::regrantMs));
      }
      anchorLeaderKills.forEach(
          (system, kills) -> leaderKillRows(lines, title(system) + ": ", kills));
      lines.add("");
      lines.add("-1 means the figure was not reached within 30 s.");
      lines.add("");
    }
    if (state != null) {
      lines.add(
          "### State size: "
              + fmt(state.keys(), 0)
              + " keys of "
              + StateSize.VALUE_BYTES
              + " bytes");
      lines.add("");
      lines.add(
          "Loaded in "
              + fmt(state.loadSeconds(), 1)
              + " s ("
              + fmt(state.keys() / state.loadSeconds(), 0)
              + " keys/s) into "
              + fmt(state.resources(), 0)
              + " resources, "
              + state.keysPerWrite()
              + " keys per write, on a cluster of its own. Heap is the node JVM's heap in use right"
              + " after a full GC (asked through its MemoryMXBean): empty, after the load, and"
              + " after the restart (the state loaded from the snapshot). Snapshot: `snapshot"
              + " create` on each node in turn, timed by the client.");
      lines.add("");
      lines.add(
          "| node | heap empty MB | heap loaded MB | heap after restart MB | snapshot ms | snapshot"
              + " MB |");
      lines.add("|---|--:|--:|--:|--:|--:|");
      for (StateSize.Node n : state.nodes()) {
        lines.add(
            "| "
                + n.id()
                + " | "
                + mbCell(n.heapEmptyBytes())
                + " | "
                + mbCell(n.heapLoadedBytes())
                + " | "
                + mbCell(n.heapRestartedBytes())
                + " | "
                + n.snapshotMs()
                + " | "
                + mbCell(n.snapshotBytes())
                + " |");
      }
      lines.add("");
      lines.add(
          "kill -9 of every node, then all restarted: first linearizable read of a loaded key after"
              + " "
              + state.restartReadMs()
              + " ms, first write (a lease granted) after "
              + state.restartWriteMs()
              + " ms, counted from the relaunch (JVM start included; -1: not within 120 s).");
      lines.add("");
    }
    if (snapshotLoad != null) {
      lines.addAll(SnapshotLoad.table(snapshotLoad));
    }
    if (nodeW2 != null) {
      lines.addAll(NodeW2.table(nodeW2));
    }
    if (manyLeases != null) {
      lines.addAll(ManyLeases.table(manyLeases));
    }
    if (costCurve != null) {
      costCurveTables(lines);
    }
    return lines;
  }

  private void costCurveTables(List<String> lines) {
    lines.add("### Cost curve");
    lines.add("");
    lines.add(
        "W2 on the bench's cluster at each worker count, after the sweeps (warm-up and window as"
            + " above); heap, snapshot and restart with each state size, each on a cluster of its"
            + " own, measured as under State size.");
    lines.add("");
    if (!costCurve.workers().isEmpty()) {
      lines.add("| W2 workers | writes/s | p99 ms |");
      lines.add("|--:|--:|--:|");
      for (CostCurve.WorkerPoint p : costCurve.workers()) {
        lines.add(
            "| "
                + p.workers()
                + " | "
                + fmt(p.opsPerSecond(), 0)
                + " | "
                + fmt(p.p99Ms(), 2)
                + " |");
      }
      lines.add("");
    }
    if (!costCurve.states().isEmpty()) {
      lines.add(
          "| keys | load s | heap per node MB (largest) | snapshot s (slowest) | restart to"
              + " serving s |");
      lines.add("|--:|--:|--:|--:|--:|");
      for (StateSize.Figures f : costCurve.states()) {
        lines.add(
            "| "
                + fmt(f.keys(), 0)
                + " | "
                + fmt(f.loadSeconds(), 1)
                + " | "
                + mbCell(f.maxHeapBytes())
                + " | "
                + (f.maxSnapshotMs() < 0 ? "?" : fmt(f.maxSnapshotMs() / 1000.0, 2))
                + " | "
                + (f.restartServingMs() < 0 ? "?" : fmt(f.restartServingMs() / 1000.0, 2))
                + " |");
      }
      lines.add("");
    }
  }

  private String handOffSuffix(Phase phase) {
    return !coldHandOffs.isEmpty() && !handOffs.isEmpty() || phase == Phase.COLD
        ? ", " + phase.label()
        : "";
  }

  private void handOffTable(List<String> lines, Phase phase) {
    List<HandOff.Figures> figures = phase == Phase.COLD ? coldHandOffs : handOffs;
    if (!figures.isEmpty()) {
      lines.add("### W6 hand-off (one resource, queued waiters)" + handOffSuffix(phase));
      lines.add("");
      lines.add(
          "All workers in line for one resource, each taking it, making one fenced write and"
              + " releasing it. A hand-off is the time from the previous holder's release being"
              + " committed (its release call returned) to the next holder's first accepted"
              + " write.");
      lines.add("");
      lines.add("| system | waiters | hand-offs/s | p50 ms | p99 ms | failed |");
      lines.add("|---|--:|--:|--:|--:|--:|");
      for (HandOff.Figures h : figures) {
        lines.add(
            "| "
                + h.system()
                + " | "
                + h.waiters()
                + " | "
                + fmt(h.handOffsPerSecond(), 0)
                + " | "
                + fmt(h.percentileMs(50), 2)
                + " | "
                + fmt(h.percentileMs(99), 2)
                + " | "
                + h.failed()
                + " |");
      }
      lines.add("");
    }
  }

  private void anchorTable(List<String> lines, Phase phase) {
    List<AnchorRatio> anchorRatios = anchorRatios(runs(phase));
    if (!anchorRatios.isEmpty()) {
      List<String> columns = anchorColumns(anchorRatios);
      lines.add(
          "### fencekeeper / "
              + columns.stream().map(BenchReport::title).collect(Collectors.joining(", "))
              + " (same run"
              + phaseSuffix(phase)
              + ")");
      lines.add("");
      lines.add(
          "Throughput and p99 of each workload, each system measured right after fencekeeper; the"
              + " ratio is fencekeeper's throughput over the other's (above 1: fencekeeper did"
              + " more).");
      lines.add("");
      StringBuilder head = new StringBuilder("| workload | workers | fencekeeper ops/s (p99 ms) |");
      StringBuilder rule = new StringBuilder("|---|--:|--:|");
      for (String a : columns) {
        head.append(' ')
            .append(title(a))
            .append(" ops/s (p99 ms) | fencekeeper/")
            .append(title(a))
            .append(" |");
        rule.append("--:|--:|");
      }
      lines.add(head.toString());
      lines.add(rule.toString());
      for (AnchorRatio r : anchorRatios) {
        StringBuilder row =
            new StringBuilder(
                "| "
                    + r.workload().name()
                    + " | "
                    + r.concurrency()
                    + " | "
                    + opsAndP99(r.fencekeeper())
                    + " |");
        for (String a : columns) {
          Measurement m = r.anchors().get(a);
          row.append(
              m == null
                  ? " – | – |"
                  : " "
                      + opsAndP99(m)
                      + " | "
                      + fmt(r.fencekeeper().opsPerSecond() / m.opsPerSecond(), 2)
                      + "× |");
        }
        lines.add(row.toString());
      }
      lines.add("");
    }
  }

  private static void leaderKillRows(List<String> lines, String prefix, List<LeaderKill> kills) {
    lines.add(
        trialsRow(
            prefix
                + "leader kill -9 → first write sent after the kill acknowledged ("
                + Failover.WRITERS
                + " writers)",
            kills,
            LeaderKill::firstWriteMs));
    lines.add(
        trialsRow(
            prefix + "leader kill -9 → every writer has a write acknowledged again",
            kills,
            LeaderKill::allWritersMs));
  }

  /** A failover row: the figure, each trial's value and their median. */
  private static <T> String trialsRow(
      String figure, List<T> trials, java.util.function.ToLongFunction<T> f) {
    return "| " + figure + " | " + list(trials, f) + " | " + median(trials, f) + " |";
  }

  private static String opsAndP99(Measurement m) {
    return fmt(m.opsPerSecond(), 0) + " (" + fmt(m.percentileMs(99), 2) + ")";
  }

  private static String mbCell(long bytes) {
    return bytes < 0 ? "?" : fmt(mb(bytes), 1);
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

  private static <T> String list(List<T> items, java.util.function.ToLongFunction<T> f) {
    return items.stream()
        .map(i -> Long.toString(f.applyAsLong(i)))
        .collect(Collectors.joining(", "));
  }

  private static <T> long median(List<T> items, java.util.function.ToLongFunction<T> f) {
    long[] v = items.stream().mapToLong(f).sorted().toArray();
    return v.length == 0 ? -1 : v[v.length / 2];
  }

  static String fmt(double v, int digits) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "?";
    }
    return String.format(Locale.ROOT, "%,." + digits + "f", v);
  }

  // ---------------------------------------------------------------------------------------------
  // docs/benchmarks.md

  /** The targets a bench run can check, with what this run measured. */
  List<String> targets() {
    List<String> lines = new ArrayList<>();
    lines.add("| target | measured | verdict |");
    lines.add("|---|---|---|");
    find(Workload.W2, 64)
        .ifPresentOrElse(
            m -> {
              lines.add(
                  target(
                      "W2 at 64 workers ≥ 8,000 writes/s (aim 16,000)",
                      m.opsPerSecond(),
                      8000,
                      true,
                      "/s"));
              lines.add(
                  target("W2 at 64 workers p99 ≤ 20 ms", m.percentileMs(99), 20, false, " ms"));
            },
            () -> lines.add("| W2 at 64 workers | not run | – |"));
    find(Workload.W2, 1)
        .ifPresentOrElse(
            m ->
                lines.add(
                    target(
                        "W2 at 1 worker p50 ≤ 1.0 ms (aim 0.7)",
                        m.percentileMs(50),
                        1.0,
                        false,
                        " ms")),
            () -> lines.add("| W2 at 1 worker | not run | – |"));
    find(Workload.W1, 64)
        .ifPresentOrElse(
            m ->
                lines.add(
                    target(
                        "W1 at 64 workers ≥ 2,400 cycles/s (aim 5,000)",
                        m.opsPerSecond(),
                        2400,
                        true,
                        "/s")),
            () -> lines.add("| W1 at 64 workers | not run | – |"));
    if (!leaderKills.isEmpty()) {
      long first = median(leaderKills, LeaderKill::firstWriteMs);
      lines.add(
          target(
              "leader kill → writes succeed again ≤ 1 s (aim 0.5 s), median",
              first < 0 ? Double.NaN : first,
              1000,
              false,
              " ms"));
    } else {
      lines.add("| leader kill → writes succeed again | not run | – |");
    }
    List<Ratio> w2 =
        ratios().stream().filter(r -> r.workload == Workload.W2).collect(Collectors.toList());
    if (w2.isEmpty()) {
      lines.add("| fencekeeper ≥ 80 % of bare Ratis | not run (no --baseline ratis) | – |");
    } else {
      for (Ratio r : w2) {
        lines.add(
            target(
                "W2 at " + r.concurrency + " workers ≥ 80 % of bare Ratis",
                100 * r.fencekeeper / r.ratis,
                80,
                true,
                " %"));
      }
    }
    if (state == null) {
      lines.add(
          "| 1,000,000 keys of 100 bytes: heap ≤ 400 MB, snapshot ≤ 5 s, restart ≤ 10 s | not run"
              + " (no --state-keys 1000000) | – |");
    } else {
      String at =
          state.keys() == 1_000_000
              ? "1,000,000 keys"
              : fmt(state.keys(), 0) + " keys (target: 1,000,000)";
      long heap = state.maxHeapBytes();
      lines.add(
          target(
              at + " of 100 bytes: heap per node ≤ 400 MB (largest, after full GC)",
              heap < 0 ? Double.NaN : mb(heap),
              400,
              false,
              " MB"));
      long snapshot = state.maxSnapshotMs();
      lines.add(
          target(
              at + ": snapshot ≤ 5 s (slowest node)",
              snapshot < 0 ? Double.NaN : snapshot / 1000.0,
              5,
              false,
              " s"));
      long serving = state.restartServingMs();
      lines.add(
          target(
              at + ": restart of every node to serving ≤ 10 s",
              serving < 0 ? Double.NaN : serving / 1000.0,
              10,
              false,
              " s"));
    }
    return lines;
  }

  /** One row of a targets table. */
  record TargetRow(String what, String measured, String verdict, boolean met) {
    String markdown() {
      return "| " + what + " | " + measured + " | " + verdict + " |";
    }

    static TargetRow notRun(String what, String why) {
      return new TargetRow(what, why, "–", false);
    }
  }

  private static String target(
      String what, double measured, double bound, boolean atLeast, String unit) {
    return targetRow(what, measured, bound, atLeast, unit, "").markdown();
  }

  /**
   * {@code measured} against {@code bound} (at least it, or at most it); {@code detail} follows the
   * measured figure in its cell.
   */
  private static TargetRow targetRow(
      String what, double measured, double bound, boolean atLeast, String unit, String detail) {
    if (Double.isNaN(measured)) {
      return new TargetRow(what, "not reached" + detail, "missed", false);
    }
    boolean met = atLeast ? measured >= bound : measured <= bound;
    String verdict;
    if (met) {
      verdict = "met";
    } else {
      double by = atLeast ? bound / measured : measured / bound;
      verdict =
          "**missed** by "
              + fmt(Math.abs(measured - bound), measured < 10 ? 2 : 0)
              + unit.trim()
              + " ("
              + fmt(by, 1)
              + "×)";
    }
    return new TargetRow(what, fmt(measured, measured < 10 ? 2 : 0) + unit + detail, verdict, met);
  }

  /**
   * The cold-start targets, checked against the cold phase: fencekeeper against ZooKeeper in the
   * same run, as a user's first comparison of the two sees them.
   */
  List<TargetRow> coldTargetRows() {
    List<TargetRow> rows = new ArrayList<>();
    String w2at64 = "W2 at 64 workers ≥ 1.5× ZooKeeper's writes/s";
    String w2p99 = "W2 at 64 workers p99 ≤ ZooKeeper's";
    String w2at1 = "W2 at 1 worker p50 ≤ ZooKeeper's";
    String w1at64 = "W1 at 64 workers ≥ 1.5× ZooKeeper's cycles/s";
    String failover =
        "leader kill -9 → every writer writing again ≤ ZooKeeper's, median (measured once, after"
            + " the sweeps)";
    Optional<AnchorRatio> w2x64 = anchorRatio(Workload.W2, 64);
    Optional<AnchorRatio> w2x1 = anchorRatio(Workload.W2, 1);
    Optional<AnchorRatio> w1x64 = anchorRatio(Workload.W1, 64);
    String missing =
        coldRuns.isEmpty() ? "not run (no --phases cold)" : "not run (no ZooKeeper row to compare)";
    w2x64.ifPresentOrElse(
        r -> {
          Measurement fk = r.fencekeeper();
          Measurement zk = r.anchors().get(ZOOKEEPER);
          rows.add(throughputTarget(w2at64, r, 1.5));
          rows.add(
              targetRow(
                  w2p99,
                  fk.percentileMs(99),
                  zk.percentileMs(99),
                  false,
                  " ms",
                  " (ZooKeeper " + fmt(zk.percentileMs(99), 2) + " ms)"));
        },
        () -> {
          rows.add(TargetRow.notRun(w2at64, missing));
          rows.add(TargetRow.notRun(w2p99, missing));
        });
    w2x1.ifPresentOrElse(
        r -> {
          Measurement zk = r.anchors().get(ZOOKEEPER);
          rows.add(
              targetRow(
                  w2at1,
                  r.fencekeeper().percentileMs(50),
                  zk.percentileMs(50),
                  false,
                  " ms",
                  " (ZooKeeper " + fmt(zk.percentileMs(50), 2) + " ms)"));
        },
        () -> rows.add(TargetRow.notRun(w2at1, missing)));
    w1x64.ifPresentOrElse(
        r -> rows.add(throughputTarget(w1at64, r, 1.5)),
        () -> rows.add(TargetRow.notRun(w1at64, missing)));
    List<LeaderKill> zkKills = anchorLeaderKills.getOrDefault(ZOOKEEPER, List.of());
    if (leaderKills.isEmpty() || zkKills.isEmpty()) {
      rows.add(TargetRow.notRun(failover, "not run (needs --failover-trials and ZooKeeper)"));
    } else {
      long fk = median(leaderKills, LeaderKill::allWritersMs);
      long zk = median(zkKills, LeaderKill::allWritersMs);
      rows.add(
          fk < 0 || zk < 0
              ? new TargetRow(
                  failover,
                  fk + " ms (ZooKeeper " + zk + " ms; -1: not within 30 s)",
                  fk < 0 ? "missed" : "met",
                  fk >= 0)
              : targetRow(failover, fk, zk, false, " ms", " (ZooKeeper " + zk + " ms)"));
    }
    return rows;
  }

  /** fencekeeper's throughput over ZooKeeper's in {@code r}, at least {@code times}. */
  private static TargetRow throughputTarget(String what, AnchorRatio r, double times) {
    Measurement fk = r.fencekeeper();
    Measurement zk = r.anchors().get(ZOOKEEPER);
    return targetRow(
        what,
        fk.opsPerSecond() / zk.opsPerSecond(),
        times,
        true,
        "×",
        " (" + fmt(fk.opsPerSecond(), 0) + " vs " + fmt(zk.opsPerSecond(), 0) + "/s)");
  }

  /** The cold phase's fencekeeper row at {@code w} and {@code concurrency} with ZooKeeper's. */
  private Optional<AnchorRatio> anchorRatio(Workload w, int concurrency) {
    return anchorRatios(coldRuns).stream()
        .filter(
            r ->
                r.workload() == w
                    && r.concurrency() == concurrency
                    && r.anchors().containsKey(ZOOKEEPER))
        .findFirst();
  }

  private Optional<Measurement> find(Workload w, int concurrency) {
    return primary(runs).stream()
        .filter(
            m ->
                FENCEKEEPER.equals(m.system())
                    && m.workload() == w
                    && m.concurrency() == concurrency)
        .findFirst();
  }

  String document(String preserved) {
    List<String> lines = new ArrayList<>();
    lines.add("# Benchmarks");
    lines.add("");
    lines.add(
        "<!-- Generated by `fencekeeper bench --output docs/benchmarks.md`; do not edit by hand"
            + " except the");
    lines.add("     summary under \"What limits performance\", which the generator keeps. -->");
    lines.add("");
    lines.add(
        "What fencekeeper does on one machine: throughput, latency and CPU per workload, failover,"
            + " and a large state. Method, machine, targets and tables below come from one run of"
            + " `fencekeeper bench`; the summary at the end is written by hand, and the dated"
            + " findings behind it are in [performance-notes.md](performance-notes.md).");
    lines.add("");
    lines.add("## Method");
    lines.add("");
    lines.add("- Command: `" + command + "`, started " + started + ".");
    lines.add("- Cluster: " + clusterDescription + ".");
    List<String> anchorsRun =
        ANCHORS.stream()
            .filter(
                a ->
                    runs.stream().anyMatch(m -> a.equals(m.system()))
                        || anchorLeaderKills.containsKey(a))
            .map(BenchReport::title)
            .toList();
    if (!anchorsRun.isEmpty()) {
      lines.add(
          "- Baselines: "
              + String.join(" and ", anchorsRun)
              + ", three members each on 127.0.0.1 from the Debian packages, each measurement right"
              + " after fencekeeper's at the same workload and concurrency; how each is run is"
              + " under [Baselines](performance-notes.md#baselines).");
    }
    lines.add(
        "- Raft settings: "
            + raftSettings.entrySet().stream()
                .map(e -> "`" + e.getKey() + "=" + e.getValue() + "`")
                .collect(Collectors.joining(", "))
            + ".");
    lines.add("- Client path: " + apiNote() + ".");
    lines.add(
        "- Latency is per step as the worker saw it (W1/W6: the whole cycle; W3: the stale write"
            + " only), from HdrHistogram. CPU is user+system time from /proc/<pid>/stat over the"
            + " measured window, divided by the steps counted in it: client = the bench JVM, server"
            + " = the three node JVMs together; server JIT % is the share of that the node JVMs'"
            + " JIT compiler threads used.");
    if (!coldRuns.isEmpty()) {
      lines.add(
          "- Phases: cold, then settled. Cold: every system's cluster freshly started, no JIT"
              + " warm-up; each system's first window after "
              + (coldWarmup == null ? "?" : fmt(coldWarmup.toMillis() / 1000.0, 0))
              + " s of unmeasured load (`--cold-warmup`), the later ones after the sweep's"
              + " `--warmup`, in the sweep's order, so a later cold row has seen more load."
              + " Settled: the same sweep after the JIT warm-up below.");
    }
    if (jitWarmup != null) {
      lines.add(
          "- Before the "
              + (coldRuns.isEmpty() ? "first workload" : "settled phase")
              + ": "
              + jitWarmup
              + ".");
    }
    lines.add("");
    lines.add("## Machine");
    lines.add("");
    lines.add(
        "- "
            + cpuModel()
            + ", "
            + Runtime.getRuntime().availableProcessors()
            + " cores, "
            + memTotal()
            + "; "
            + System.getProperty("os.name")
            + " "
            + System.getProperty("os.version")
            + "; Java "
            + System.getProperty("java.version")
            + ".");
    lines.add(
        "- Load average (1, 5, 15 min) at start: "
            + loadAtStart
            + "; at end: "
            + loadAtEnd
            + ". The bench's own four JVMs account for about 2 of it; anything well above that was"
            + " other work on the machine.");
    lines.add("");
    lines.add("## Targets");
    lines.add("");
    if (bothPhases()) {
      lines.add("Checked against the settled figures.");
      lines.add("");
    }
    lines.addAll(targets());
    lines.add("");
    lines.add("## Targets against ZooKeeper, cold");
    lines.add("");
    lines.add(
        "The cold-start targets, checked against the cold phase: fencekeeper and ZooKeeper in the"
            + " same run, each soon after its cluster is up.");
    lines.add("");
    lines.add("| target | measured | verdict |");
    lines.add("|---|---|---|");
    coldTargetRows().forEach(t -> lines.add(t.markdown()));
    lines.add("");
    lines.add("## Results");
    lines.add("");
    lines.addAll(tables());
    if (costCurveImage != null) {
      if (costCurve == null) {
        lines.add("### Cost curve");
        lines.add("");
        lines.add(
            "Drawn by an earlier run with `--cost-curve` (its figures are not in this run's"
                + " tables):");
        lines.add("");
      }
      lines.add(
          "![The cost curve: throughput and p99 against workers; heap, snapshot and restart"
              + " time against keys]("
              + costCurveImage
              + ")");
      lines.add("");
    }
    lines.add("## What limits performance");
    lines.add("");
    lines.add(PRESERVED_BEGIN);
    lines.add(preserved == null || preserved.isBlank() ? "(none recorded yet)" : preserved.strip());
    lines.add(PRESERVED_END);
    lines.add("");
    return String.join("\n", lines);
  }

  /** The hand-written section of an existing document, or null if there is none. */
  static String preservedSection(Path doc) throws IOException {
    if (!Files.exists(doc)) {
      return null;
    }
    String text = Files.readString(doc);
    int begin = text.indexOf(PRESERVED_BEGIN);
    int end = text.indexOf(PRESERVED_END);
    if (begin < 0 || end < begin) {
      return null;
    }
    return text.substring(begin + PRESERVED_BEGIN.length(), end);
  }

  // ---------------------------------------------------------------------------------------------
  // Machine

  static String cpuModel() {
    try {
      return Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
          .filter(l -> l.startsWith("model name"))
          .map(l -> l.substring(l.indexOf(':') + 1).trim())
          .findFirst()
          .orElse("unknown CPU");
    } catch (IOException e) {
      return "unknown CPU";
    }
  }

  private static String memTotal() {
    try {
      return Files.readAllLines(Path.of("/proc/meminfo")).stream()
          .filter(l -> l.startsWith("MemTotal"))
          .map(l -> Long.parseLong(l.replaceAll("\\D", "")) / 1024 / 1024 + " GiB RAM")
          .findFirst()
          .orElse("unknown RAM");
    } catch (IOException | NumberFormatException e) {
      return "unknown RAM";
    }
  }

  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }
}
