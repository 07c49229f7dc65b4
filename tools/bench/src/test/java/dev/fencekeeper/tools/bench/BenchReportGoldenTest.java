package dev.fencekeeper.tools.bench;

import static dev.fencekeeper.tools.bench.BenchReportTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.tools.bench.Failover.DeadHolder;
import dev.fencekeeper.tools.bench.Failover.LeaderKill;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/**
 * The rendered docs/benchmarks.md and the default output's tables of fixed figures, against golden
 * files that hold what the report wrote for the same figures. Only what depends on the machine and
 * the clock is masked: the start time, the machine line and the load average at the start.
 *
 * <p>After a deliberate change of the report's text, rewrite the golden files with {@code
 * -Dbench.golden.write=true} (run from tools/bench) and read their diff.
 */
class BenchReportGoldenTest {
  private static final Path WRITE_TO = Path.of("src/test/resources/dev/fencekeeper/tools/bench");

  // Guarantee: a report with every section renders as the golden document, section for section and
  // row for row.
  @Test
  void everySectionRendersAsTheGoldenDocument() throws IOException {
    BenchReport r = full();
    check(
        "golden-full.md",
        r.document("\nThe hand-written summary: Raft's log writes, then gRPC.\n\n- a list item\n"));
    check("golden-full-tables.md", String.join("\n", r.tables()) + "\n");
  }

  // Guarantee: a report with nothing measured says "not run" and "(none recorded yet)" where the
  // golden document does, and leaves out the sections it has no figures for.
  @Test
  void anEmptyReportRendersAsTheGoldenDocument() throws IOException {
    BenchReport r = new BenchReport("./fencekeeper bench --quick", ClusterConfig.local(7301), "x");
    r.loadAtEnd = "0.10 0.20 0.30";
    check("golden-empty.md", r.document(null));
    check("golden-empty-tables.md", String.join("\n", r.tables()) + "\n");
  }

  // Guarantee: the raw-token path first, figures not reached (-1), a smaller state and a chart an
  // earlier run drew render as the golden document.
  @Test
  void rawFirstAndUnreachedFiguresRenderAsTheGoldenDocument() throws IOException {
    BenchReport r =
        new BenchReport("./fencekeeper bench --api raw", ClusterConfig.local(7301), "ext");
    r.loadAtEnd = "1.00 1.00 1.00";
    r.apis = List.of(ClientApi.RAW);
    r.runs.add(ClientPathsTest.row(BenchReport.FENCEKEEPER, Workload.W2, 64, 9000, ClientApi.RAW));
    r.runs.add(ClientPathsTest.row(BenchReport.FENCEKEEPER, Workload.W1, 64, 3000, ClientApi.RAW));
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W5, 1, 80, 670, 0, 500));
    r.runs.add(run(BenchReport.ZOOKEEPER, Workload.W2, 64, 8000, 0, 0, 16_000));
    r.leaderKills.add(new LeaderKill("n2", -1, -1, -1));
    r.anchorLeaderKills.put(BenchReport.ZOOKEEPER, List.of(new LeaderKill("zk1", 1900, 2000, -1)));
    r.state =
        new StateSize.Figures(
            2_000,
            2,
            64,
            1.0,
            List.of(new StateSize.Node("n1", -1, 21_000_000, -1, 40, -1)),
            -1,
            -1);
    r.costCurveImage = "benchmarks-cost-curve.png";
    check("golden-raw.md", r.document("   "));
  }

  private static BenchReport full() {
    BenchReport r =
        new BenchReport(
            "./fencekeeper bench --baseline ratis,zookeeper,etcd --phases cold,settled",
            ClusterConfig.local(7301),
            "3 nodes on 127.0.0.1, each its own JVM");
    r.loadAtEnd = "2.10 1.90 1.50";
    r.apis = List.of(ClientApi.LEASE, ClientApi.RAW);
    r.phases = List.of(Phase.COLD, Phase.SETTLED);
    r.coldWarmup = Duration.ofSeconds(15);
    r.jitWarmup = "W2 at 64 workers for 20 s";
    for (int c : new int[] {1, 64}) {
      r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W1, c, 3000L * c, 0, 0, 20_000));
      r.runs.add(
          ClientPathsTest.row(BenchReport.FENCEKEEPER, Workload.W1, c, 4000L * c, ClientApi.RAW));
      r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W2, c, 200L * c, 0, 0, 900 * c));
      r.runs.add(run(BenchReport.RATIS, Workload.W2, c, 250L * c, 0, 0, 700 * c));
      r.runs.add(run(BenchReport.ZOOKEEPER, Workload.W2, c, 180L * c, 0, 0, 800 * c));
      r.runs.add(run(BenchReport.ETCD, Workload.W2, c, 150L * c, 0, 0, 1000 * c));
      r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W3, c, 100, 0, 0, 500));
      r.runs.add(run(BenchReport.ZOOKEEPER, Workload.W3, c, 100, 0, 0, 700));
      r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W4, c, 9000, 0, 0, 300));
      r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W5, c, 80, 670, 0, 500));
      r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W6, c, 200, 0, 0, 60_000));
      r.runs.add(run(BenchReport.ZOOKEEPER, Workload.W6, c, 400, 0, 0, 40_000));
      r.coldRuns.add(run(BenchReport.FENCEKEEPER, Workload.W2, c, 120L * c, 0, 0, 1500 * c));
      r.coldRuns.add(run(BenchReport.ZOOKEEPER, Workload.W2, c, 110L * c, 0, 0, 1100 * c));
      r.coldRuns.add(run(BenchReport.FENCEKEEPER, Workload.W1, c, 2000L * c, 0, 0, 47_000));
      r.coldRuns.add(run(BenchReport.ZOOKEEPER, Workload.W1, c, 1500L * c, 0, 0, 39_500));
    }
    Histogram fk = new Histogram(3);
    fk.recordValue(40_000);
    Histogram zk = new Histogram(3);
    zk.recordValue(8_000);
    r.handOffs.add(new HandOff.Figures(BenchReport.FENCEKEEPER, 16, 200, 0, 2.0, fk));
    r.handOffs.add(new HandOff.Figures(BenchReport.ZOOKEEPER, 16, 600, 1, 2.0, zk));
    r.coldHandOffs.add(new HandOff.Figures(BenchReport.FENCEKEEPER, 16, 100, 2, 2.0, fk));
    r.leaderKills.add(new LeaderKill("n1", 300, 900, 1));
    r.leaderKills.add(new LeaderKill("n2", 350, 1000, 2));
    r.leaderKills.add(new LeaderKill("n3", 280, 800, 1));
    r.deadHolders.add(new DeadHolder(5000, 5400));
    r.deadHolders.add(new DeadHolder(5000, 5600));
    r.anchorLeaderKills.put(
        BenchReport.ZOOKEEPER,
        List.of(new LeaderKill("zk2", 2100, 2300, -1), new LeaderKill("zk1", 1900, 2000, -1)));
    r.anchorLeaderKills.put(BenchReport.ETCD, List.of(new LeaderKill("etcd1", 1200, 1500, -1)));
    r.state =
        new StateSize.Figures(
            1_000_000,
            1000,
            64,
            100.0,
            List.of(
                new StateSize.Node("n1", 18_000_000, 380_000_000, 280_000_000, 4_200, 129_000_000),
                new StateSize.Node("n2", 18_000_000, 420_000_000, 280_000_000, 6_000, 129_000_000),
                new StateSize.Node("n3", -1, -1, -1, 3_000, 129_000_000)),
            8_000,
            12_500);
    r.snapshotLoad = SnapshotLoadTest.figures();
    r.nodeW2 = NodeW2Test.figures();
    r.manyLeases = ManyLeasesTest.figures();
    r.costCurve =
        new CostCurve.Figures(
            List.of(
                new CostCurve.WorkerPoint(64, 12_000, 9.5),
                new CostCurve.WorkerPoint(1024, 33_000, 95.5)),
            List.of(r.state));
    r.costCurveImage = "benchmarks-cost-curve.png";
    return r;
  }

  private void check(String golden, String rendered) throws IOException {
    String actual = mask(rendered);
    if (Boolean.getBoolean("bench.golden.write")) {
      Files.createDirectories(WRITE_TO);
      Files.writeString(WRITE_TO.resolve(golden), actual);
      return;
    }
    try (InputStream in = getClass().getResourceAsStream(golden)) {
      assertThat(in).as(golden).isNotNull();
      assertThat(actual).isEqualTo(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }

  /** Masks what depends on the machine and the clock, and nothing else. */
  static String mask(String markdown) {
    return markdown
        .replaceAll("started \\d{4}-\\d\\d-\\d\\dT[0-9:]+Z\\.", "started (start time).")
        .replaceAll("(?m)^- .*, \\d+ cores, .*; Java .*\\.$", "- (machine).")
        .replaceAll("at start: [^;]*; at end:", "at start: (load); at end:");
  }
}
