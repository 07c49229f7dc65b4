package dev.fencekeeper.tools.bench;

import static dev.fencekeeper.tools.bench.BenchReport.FENCEKEEPER;
import static dev.fencekeeper.tools.bench.BenchReport.ZOOKEEPER;

import dev.fencekeeper.tools.bench.BenchReport.AnchorRatio;
import dev.fencekeeper.tools.bench.BenchReport.Ratio;
import dev.fencekeeper.tools.bench.BenchReport.TargetRow;
import dev.fencekeeper.tools.bench.Failover.LeaderKill;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The targets a bench run is checked against: the settled figures against fixed bounds, and the
 * cold phase's against ZooKeeper in the same run.
 */
final class BenchTargets {
  private BenchTargets() {}

  /** The targets a bench run can check, with what this run measured. */
  static List<TargetRow> targets(BenchReport report) {
    List<TargetRow> lines = new ArrayList<>();
    find(report, Workload.W2, 64)
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
            () -> lines.add(TargetRow.notRun("W2 at 64 workers", "not run")));
    find(report, Workload.W2, 1)
        .ifPresentOrElse(
            m ->
                lines.add(
                    target(
                        "W2 at 1 worker p50 ≤ 1.0 ms (aim 0.7)",
                        m.percentileMs(50),
                        1.0,
                        false,
                        " ms")),
            () -> lines.add(TargetRow.notRun("W2 at 1 worker", "not run")));
    find(report, Workload.W1, 64)
        .ifPresentOrElse(
            m ->
                lines.add(
                    target(
                        "W1 at 64 workers ≥ 2,400 cycles/s (aim 5,000)",
                        m.opsPerSecond(),
                        2400,
                        true,
                        "/s")),
            () -> lines.add(TargetRow.notRun("W1 at 64 workers", "not run")));
    if (!report.leaderKills.isEmpty()) {
      long first = BenchReport.median(report.leaderKills, LeaderKill::firstWriteMs);
      lines.add(
          target(
              "leader kill → writes succeed again ≤ 1 s (aim 0.5 s), median",
              first < 0 ? Double.NaN : first,
              1000,
              false,
              " ms"));
    } else {
      lines.add(TargetRow.notRun("leader kill → writes succeed again", "not run"));
    }
    List<Ratio> w2 =
        report.ratios().stream()
            .filter(r -> r.workload() == Workload.W2)
            .collect(Collectors.toList());
    if (w2.isEmpty()) {
      lines.add(
          TargetRow.notRun("fencekeeper ≥ 80 % of bare Ratis", "not run (no --baseline ratis)"));
    } else {
      for (Ratio r : w2) {
        lines.add(
            target(
                "W2 at " + r.concurrency() + " workers ≥ 80 % of bare Ratis",
                100 * r.fencekeeper() / r.ratis(),
                80,
                true,
                " %"));
      }
    }
    if (report.state == null) {
      lines.add(
          TargetRow.notRun(
              "1,000,000 keys of 100 bytes: heap ≤ 400 MB, snapshot ≤ 5 s, restart ≤ 10 s",
              "not run (no --state-keys 1000000)"));
    } else {
      String at =
          report.state.keys() == 1_000_000
              ? "1,000,000 keys"
              : BenchReport.fmt(report.state.keys(), 0) + " keys (target: 1,000,000)";
      long heap = report.state.maxHeapBytes();
      lines.add(
          target(
              at + " of 100 bytes: heap per node ≤ 400 MB (largest, after full GC)",
              heap < 0 ? Double.NaN : BenchReport.mb(heap),
              400,
              false,
              " MB"));
      long snapshot = report.state.maxSnapshotMs();
      lines.add(
          target(
              at + ": snapshot ≤ 5 s (slowest node)",
              snapshot < 0 ? Double.NaN : snapshot / 1000.0,
              5,
              false,
              " s"));
      long serving = report.state.restartServingMs();
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

  private static TargetRow target(
      String what, double measured, double bound, boolean atLeast, String unit) {
    return targetRow(what, measured, bound, atLeast, unit, "");
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
              + BenchReport.fmt(Math.abs(measured - bound), measured < 10 ? 2 : 0)
              + unit.trim()
              + " ("
              + BenchReport.fmt(by, 1)
              + "×)";
    }
    return new TargetRow(
        what, BenchReport.fmt(measured, measured < 10 ? 2 : 0) + unit + detail, verdict, met);
  }

  /**
   * The cold-start targets, checked against the cold phase: fencekeeper against ZooKeeper in the
   * same run, as a user's first comparison of the two sees them.
   */
  static List<TargetRow> coldTargets(BenchReport report) {
    List<TargetRow> rows = new ArrayList<>();
    String w2at64 = "W2 at 64 workers ≥ 1.5× ZooKeeper's writes/s";
    String w2p99 = "W2 at 64 workers p99 ≤ ZooKeeper's";
    String w2at1 = "W2 at 1 worker p50 ≤ ZooKeeper's";
    String w1at64 = "W1 at 64 workers ≥ 1.5× ZooKeeper's cycles/s";
    String failover =
        "leader kill -9 → every writer writing again ≤ ZooKeeper's, median (measured once, after"
            + " the sweeps)";
    Optional<AnchorRatio> w2x64 = anchorRatio(report, Workload.W2, 64);
    Optional<AnchorRatio> w2x1 = anchorRatio(report, Workload.W2, 1);
    Optional<AnchorRatio> w1x64 = anchorRatio(report, Workload.W1, 64);
    String missing =
        report.coldRuns.isEmpty()
            ? "not run (no --phases cold)"
            : "not run (no ZooKeeper row to compare)";
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
                  " (ZooKeeper " + BenchReport.fmt(zk.percentileMs(99), 2) + " ms)"));
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
                  " (ZooKeeper " + BenchReport.fmt(zk.percentileMs(50), 2) + " ms)"));
        },
        () -> rows.add(TargetRow.notRun(w2at1, missing)));
    w1x64.ifPresentOrElse(
        r -> rows.add(throughputTarget(w1at64, r, 1.5)),
        () -> rows.add(TargetRow.notRun(w1at64, missing)));
    List<LeaderKill> zkKills = report.anchorLeaderKills.getOrDefault(ZOOKEEPER, List.of());
    if (report.leaderKills.isEmpty() || zkKills.isEmpty()) {
      rows.add(TargetRow.notRun(failover, "not run (needs --failover-trials and ZooKeeper)"));
    } else {
      long fk = BenchReport.median(report.leaderKills, LeaderKill::allWritersMs);
      long zk = BenchReport.median(zkKills, LeaderKill::allWritersMs);
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
        " ("
            + BenchReport.fmt(fk.opsPerSecond(), 0)
            + " vs "
            + BenchReport.fmt(zk.opsPerSecond(), 0)
            + "/s)");
  }

  /** The cold phase's fencekeeper row at {@code w} and {@code concurrency} with ZooKeeper's. */
  private static Optional<AnchorRatio> anchorRatio(
      BenchReport report, Workload w, int concurrency) {
    return BenchReport.anchorRatios(report.coldRuns).stream()
        .filter(
            r ->
                r.workload() == w
                    && r.concurrency() == concurrency
                    && r.anchors().containsKey(ZOOKEEPER))
        .findFirst();
  }

  private static Optional<Measurement> find(BenchReport report, Workload w, int concurrency) {
    return BenchReport.primary(report.runs).stream()
        .filter(
            m ->
                FENCEKEEPER.equals(m.system())
                    && m.workload() == w
                    && m.concurrency() == concurrency)
        .findFirst();
  }
}
