package dev.fencekeeper.tools.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.server.RaftConfig;
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
import org.apache.ratis.conf.RaftProperties;

/**
 * What a bench run found, as JSON ({@code --json}, {@link BenchJson}), as Markdown tables (the
 * default output), and as the whole of docs/benchmarks.md ({@code --output}). The Markdown is
 * rendered from Mustache templates beside this class ({@link ReportTemplate}) filled with the
 * figures as cells ({@link ReportModel}): method, machine, targets and tables are generated; the
 * one hand-written part, the summary between {@link #PRESERVED_BEGIN} and {@link #PRESERVED_END},
 * is carried over from the file being replaced.
 */
final class BenchReport {
  static final String FENCEKEEPER = "fencekeeper";
  static final String RATIS = "ratis-counter";
  static final String ZOOKEEPER = "zookeeper";

  /** ZooKeeper driven through Curator's lock recipe: five or more round trips a lock cycle. */
  static final String ZOOKEEPER_CURATOR = "zookeeper-curator";

  static final String ETCD = "etcd";

  /** The anchors, in the order of their columns. */
  static final List<String> ANCHORS = List.of(ZOOKEEPER, ZOOKEEPER_CURATOR, ETCD);

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

  /** --rate: steps a second of every measured window; 0: closed loops. */
  double ratePerSecond;

  /** --histogram-logs as given; null when not asked for. */
  String histogramLogs;

  /** --idle: each system's idle cluster CPU; empty when not measured. */
  final List<IdleCpu.Figures> idle = new ArrayList<>();

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
    if (config.peers().isEmpty()) {
      raftSettings.put("(unknown)", "a running cluster named by its endpoints: its nodes' own");
      return;
    }
    try {
      RaftProperties server =
          RaftConfig.serverProperties(config.withNodeId(config.peers().get(0).id()));
      for (String key : SHOWN_RAFT_KEYS) {
        String value = server.get(key);
        raftSettings.put(key, value == null ? "(Ratis default)" : value);
      }
      raftSettings.put(
          "raft.client.rpc.request.timeout",
          RaftConfig.clientProperties(config).get("raft.client.rpc.request.timeout"));
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

  /** The {@code --json} document. */
  ObjectNode toJson() {
    return BenchJson.of(this);
  }

  /** Bytes as MB (10^6, as the target counts); -1 stays -1 (unknown). */
  static double mb(long bytes) {
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
  // Comparisons and formatting, shared by the JSON, the targets and the Markdown

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

  static String title(String system) {
    return switch (system) {
      case ZOOKEEPER -> "ZooKeeper";
      case ZOOKEEPER_CURATOR -> "ZooKeeper (Curator recipe)";
      default -> system;
    };
  }

  /** Both phases ran: each table says which one it shows. */
  boolean bothPhases() {
    return !coldRuns.isEmpty() && !runs.isEmpty();
  }

  String phaseSuffix(Phase phase) {
    return bothPhases() || phase == Phase.COLD ? ", " + phase.label() : "";
  }

  List<Measurement> runs(Phase phase) {
    return phase == Phase.COLD ? coldRuns : runs;
  }

  /**
   * The result tables as the bench prints them (its default output), one line an element: one per
   * workload and phase, the baseline ratios, the hand-offs, the anchor ratios per phase, the
   * failover and state figures.
   */
  List<String> tables() {
    String tables = ReportTemplate.render(ReportTemplate.TABLES, ReportModel.tables(this));
    return tables.isEmpty()
        ? List.of()
        : List.of(tables.substring(0, tables.length() - 1).split("\n", -1));
  }

  String handOffSuffix(Phase phase) {
    return !coldHandOffs.isEmpty() && !handOffs.isEmpty() || phase == Phase.COLD
        ? ", " + phase.label()
        : "";
  }

  static <T> long median(List<T> items, java.util.function.ToLongFunction<T> f) {
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

  /** The targets a bench run can check, with what this run measured, as Markdown rows. */
  List<String> targets() {
    return BenchTargets.targets(this).stream().map(TargetRow::markdown).toList();
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

  /**
   * The cold-start targets, checked against the cold phase: fencekeeper against ZooKeeper in the
   * same run, as a user's first comparison of the two sees them.
   */
  List<TargetRow> coldTargetRows() {
    return BenchTargets.coldTargets(this);
  }

  /**
   * The whole of docs/benchmarks.md, with {@code preserved} as its hand-written summary (none: null
   * or blank).
   */
  String document(String preserved) {
    return ReportTemplate.render(ReportTemplate.DOCUMENT, ReportModel.document(this, preserved));
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

  static String memTotal() {
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
