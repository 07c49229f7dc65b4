package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchReportTest {
  @TempDir Path dir;

  static Measurement run(
      String system,
      Workload w,
      int concurrency,
      long ops,
      long failed,
      long stale,
      long p50Micros) {
    Histogram h = new Histogram(3);
    for (int i = 0; i < ops; i++) {
      h.recordValue(p50Micros);
    }
    return new Measurement(
        system,
        w,
        concurrency,
        1,
        ops,
        failed,
        ops + failed,
        stale,
        1.0,
        h,
        100,
        200,
        50,
        0,
        failed == 0
            ? Map.of()
            : Map.of(stale > 0 ? "stale write ACCEPTED" : "UNAVAILABLE", failed));
  }

  private static BenchReport report() {
    return new BenchReport("./fencekeeper bench", ClusterConfig.local(7301), "test cluster");
  }

  // Guarantee: the bench fails (exit 18) when a stale write was accepted, or when one was not
  // definitely rejected.
  @Test
  void w3FailsOnAnyStaleWriteNotDefinitelyRejected() {
    BenchReport ok = report();
    ok.runs.add(run(BenchReport.FENCEKEEPER, Workload.W3, 16, 100, 0, 0, 500));
    assertThat(ok.w3Failure()).isEmpty();

    BenchReport accepted = report();
    accepted.runs.add(run(BenchReport.FENCEKEEPER, Workload.W3, 16, 99, 1, 1, 500));
    assertThat(accepted.w3Failure()).get().asString().contains("ACCEPTED");

    BenchReport unknown = report();
    unknown.runs.add(run(BenchReport.FENCEKEEPER, Workload.W3, 16, 99, 1, 0, 500));
    assertThat(unknown.w3Failure()).get().asString().contains("not definitely rejected");

    BenchReport duringWarmUp = report();
    duringWarmUp.warmupStaleAccepted = 1;
    assertThat(duringWarmUp.w3Failure()).get().asString().contains("warm-up").contains("ACCEPTED");
    assertThat(unknown.toJson().path("status").asText()).isEqualTo("FAILED");
  }

  // Guarantee: a row with failed steps names their result codes (W5 at one worker fails by the
  // client's pace, and a bare count would not say so); a row without failures says 0.
  @Test
  void failedCellNamesTheResultCodes() {
    BenchReport r = report();
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W5, 1, 80, 670, 0, 500));
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W5, 16, 990, 0, 0, 500));

    String tables = String.join("\n", r.tables());
    assertThat(tables).contains("| 670 (UNAVAILABLE) |").contains("| 0 |");
  }

  // Guarantee: the 1,000,000-key target reads the largest heap, the slowest snapshot and the
  // restart until both a read and a write were served; without --state-keys it says how to run it;
  // a smaller run is labelled.
  @Test
  void stateTargetsUseTheWorstNodeAndTheLaterOfReadAndWrite() {
    BenchReport none = report();
    assertThat(String.join("\n", none.targets())).contains("not run (no --state-keys 1000000)");

    BenchReport r = report();
    r.state =
        new StateSize.Figures(
            1_000_000,
            1000,
            64,
            100.0,
            java.util.List.of(
                new StateSize.Node("n1", 18_000_000, 380_000_000, 280_000_000, 4_200, 129_000_000),
                new StateSize.Node("n2", 18_000_000, 420_000_000, 280_000_000, 6_000, 129_000_000),
                new StateSize.Node("n3", -1, -1, -1, 3_000, 129_000_000)),
            8_000,
            12_500);
    String targets = String.join("\n", r.targets());
    assertThat(targets)
        .contains(
            "| 1,000,000 keys of 100 bytes: heap per node ≤ 400 MB (largest, after full GC) | 420"
                + " MB | **missed** by 20MB (1.1×) |");
    assertThat(targets)
        .contains(
            "| 1,000,000 keys: snapshot ≤ 5 s (slowest node) | 6.00 s | **missed** by 1.00s (1.2×)"
                + " |");
    assertThat(targets)
        .contains(
            "| 1,000,000 keys: restart of every node to serving ≤ 10 s | 13 s | **missed** by 3s"
                + " (1.3×) |");
    assertThat(String.join("\n", r.tables()))
        .contains(
            "### State size: 1,000,000 keys of 100 bytes", "| n3 | ? | ? | ? | 3000 | 129.0 |");
    assertThat(r.toJson().path("state").path("restart_serving_ms").asLong()).isEqualTo(12_500);

    r.state = new StateSize.Figures(2_000, 2, 64, 1.0, r.state.nodes(), 100, 200);
    assertThat(String.join("\n", r.targets()))
        .contains("| 2,000 keys (target: 1,000,000) of 100 bytes: heap");
  }

  // Guarantee: a missed target says by how much; a met one says met; the bare-Ratis ratio uses the
  // same concurrency.
  @Test
  void targetsSayWhetherAndByHowMuchTheyAreMissed() {
    BenchReport r = report();
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W2, 64, 4000, 0, 0, 10_000));
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W2, 1, 900, 0, 0, 800));
    r.runs.add(run(BenchReport.RATIS, Workload.W2, 64, 5000, 0, 0, 8_000));
    String targets = String.join("\n", r.targets());
    assertThat(targets)
        .contains(
            "| W2 at 64 workers ≥ 8,000 writes/s (aim 16,000) | 4,000/s | **missed** by 4,000/s"
                + " (2.0×) |");
    assertThat(targets).contains("| W2 at 1 worker p50 ≤ 1.0 ms (aim 0.7) | 0.80 ms | met |");
    assertThat(targets).contains("| W2 at 64 workers ≥ 80 % of bare Ratis | 80 % | met |");
    assertThat(targets).contains("W1 at 64 workers | not run");
  }

  // Guarantee: regenerating the document keeps its hand-written profile section and nothing else of
  // the old text.
  @Test
  void tablesShowTheShareOfServerCpuTheJitCompilersTook() {
    BenchReport r = report();
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W2, 64, 4000, 0, 0, 10_000));
    String tables = String.join("\n", r.tables());
    assertThat(tables).contains("| server cores | server JIT % | elections |");
    // 200 ms of server CPU, 50 of them in the compilers, over one second.
    assertThat(tables).contains("| 0.20 | 25 | 0 |");
    assertThat(r.toJson().get("results").get(0).get("server_jit_cpu_ms").asLong()).isEqualTo(50);
  }

  @Test
  void regenerationKeepsOnlyTheHandWrittenSection() throws Exception {
    Path doc = dir.resolve("benchmarks.md");
    Files.writeString(
        doc,
        "# stale figures\n"
            + BenchReport.PRESERVED_BEGIN
            + "\nJFR says: gRPC.\n"
            + BenchReport.PRESERVED_END
            + "\nold tail\n");
    BenchReport r = report();
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W4, 1, 10, 0, 0, 100));
    String regenerated = r.document(BenchReport.preservedSection(doc));
    assertThat(regenerated)
        .contains("JFR says: gRPC.", "### W4 linearizable reads")
        .doesNotContain("stale figures", "old tail");
    assertThat(BenchReport.preservedSection(dir.resolve("missing.md"))).isNull();
  }

  // Guarantee: each fencekeeper row is set against ZooKeeper's and etcd's at the same workload and
  // concurrency, ratio = fencekeeper's throughput over the anchor's, in the Markdown table and in
  // --json; an anchor that did not run a workload leaves its cells empty instead of dividing by
  // nothing.
  @Test
  void anchorRatiosCompareTheSameWorkloadAndConcurrency() {
    BenchReport r = report();
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W2, 64, 6000, 0, 0, 30_000));
    r.runs.add(run(BenchReport.ZOOKEEPER, Workload.W2, 64, 8000, 0, 0, 16_000));
    r.runs.add(run(BenchReport.ETCD, Workload.W2, 64, 4000, 0, 0, 30_000));
    r.runs.add(
        run(BenchReport.ZOOKEEPER, Workload.W2, 1, 1700, 0, 0, 900)); // no fencekeeper row at 1
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W6, 16, 200, 0, 0, 60_000));
    r.runs.add(run(BenchReport.ZOOKEEPER, Workload.W6, 16, 400, 0, 0, 40_000));

    String tables = String.join("\n", r.tables());
    assertThat(tables)
        .contains(
            "### fencekeeper / ZooKeeper, etcd (same run)",
            "| workload | workers | fencekeeper ops/s (p99 ms) | ZooKeeper ops/s (p99 ms) |"
                + " fencekeeper/ZooKeeper | etcd ops/s (p99 ms) | fencekeeper/etcd |",
            "| W2 | 64 | 6,000 (30.02) | 8,000 (16.01) | 0.75× | 4,000 (30.02) | 1.50× |",
            "| W6 | 16 | 200 (60.03) | 400 (40.03) | 0.50× | – | – |");
    assertThat(tables).doesNotContain("| W2 | 1 |");

    var ratios = r.toJson().get("anchor_ratios");
    assertThat(ratios).hasSize(2);
    assertThat(ratios.get(0).get("fencekeeper_per_zookeeper").asDouble()).isEqualTo(0.75);
    assertThat(ratios.get(0).get("fencekeeper_per_etcd").asDouble()).isEqualTo(1.5);
    assertThat(ratios.get(0).get("zookeeper_p99_ms").asDouble()).isEqualTo(16.007);
    assertThat(ratios.get(1).has("etcd_ops_per_sec")).isFalse();
    // The bare-Ratis ratios stay as they were: none here.
    assertThat(r.toJson().get("baseline_ratios")).isEmpty();
    assertThat(r.document(null))
        .contains("- Baselines: ZooKeeper and etcd, three members each on 127.0.0.1");
    assertThat(report().document(null)).doesNotContain("- Baselines:");
  }

  // Guarantee: the Curator recipe's rows are a column of their own, labelled, between ZooKeeper's
  // fastest recipe and etcd, with snake_case JSON keys.
  @Test
  void curatorRecipeIsAColumnOfItsOwn() {
    BenchReport r = report();
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W1, 64, 3000, 0, 0, 20_000));
    r.runs.add(run(BenchReport.ZOOKEEPER, Workload.W1, 64, 2000, 0, 0, 30_000));
    r.runs.add(run(BenchReport.ZOOKEEPER_CURATOR, Workload.W1, 64, 1000, 0, 0, 60_000));

    assertThat(String.join("\n", r.tables()))
        .contains(
            "| W1 | 64 | 3,000 (20.02) | 2,000 (30.02) | 1.50× | 1,000 (60.03) | 3.00× |",
            "fencekeeper/ZooKeeper (Curator recipe) |");
    var ratio = r.toJson().get("anchor_ratios").get(0);
    assertThat(ratio.get("fencekeeper_per_zookeeper").asDouble()).isEqualTo(1.5);
    assertThat(ratio.get("fencekeeper_per_zookeeper_curator").asDouble()).isEqualTo(3.0);
  }

  // Guarantee: --idle's figures are a table of each system's CPU in percent of one core, with the
  // JIT's share and fencekeeper's ratio to each, and a JSON array.
  @Test
  void idleCpuIsATableAndJson() {
    BenchReport r = report();
    r.idle.add(new IdleCpu.Figures(BenchReport.FENCEKEEPER, 30.0, 3000, 300));
    r.idle.add(new IdleCpu.Figures(BenchReport.ETCD, 30.0, 1500, 0));
    r.idle.add(new IdleCpu.Figures(BenchReport.ZOOKEEPER, 30.0, -1, -1));

    assertThat(String.join("\n", r.tables()))
        .contains(
            "### Idle cluster CPU",
            "| fencekeeper | 10.0 | 10 | 1.0× |",
            "| etcd | 5.0 | 0 | 2.0× |",
            "| ZooKeeper | ? | ? | ?× |");
    var idle = r.toJson().get("idle");
    assertThat(idle).hasSize(3);
    assertThat(idle.get(1).get("cpu_percent_of_core").asDouble()).isEqualTo(5.0);
    assertThat(idle.get(2).get("server_cpu_ms").asLong()).isEqualTo(-1);
    assertThat(report().tables()).noneMatch(l -> l.contains("Idle"));
  }

  // Guarantee: W3 on an anchor is held to the same rule as on fencekeeper: a stale write accepted,
  // or one not definitely refused, fails the bench (exit 18), naming the system; all refused
  // passes.
  @Test
  void w3FailsOnAnAnchorThatAcceptedAStaleWrite() {
    BenchReport ok = report();
    ok.runs.add(run(BenchReport.FENCEKEEPER, Workload.W3, 4, 100, 0, 0, 500));
    ok.runs.add(run(BenchReport.ZOOKEEPER, Workload.W3, 4, 100, 0, 0, 500));
    ok.runs.add(run(BenchReport.ETCD, Workload.W3, 4, 100, 0, 0, 500));
    assertThat(ok.w3Failure()).isEmpty();
    assertThat(String.join("\n", ok.tables()))
        .contains("| etcd | 4 | 100 |", "| 0 accepted, 100/100 rejected |");

    BenchReport accepted = report();
    accepted.runs.add(run(BenchReport.FENCEKEEPER, Workload.W3, 4, 100, 0, 0, 500));
    accepted.runs.add(run(BenchReport.ETCD, Workload.W3, 4, 99, 1, 1, 500));
    assertThat(accepted.w3Failure())
        .get()
        .asString()
        .isEqualTo("W3 on etcd at 4 workers: 1 stale writes were ACCEPTED");
    assertThat(accepted.toJson().path("status").asText()).isEqualTo("FAILED");

    BenchReport unknown = report();
    unknown.runs.add(run(BenchReport.ZOOKEEPER, Workload.W3, 4, 99, 1, 0, 500));
    assertThat(unknown.w3Failure())
        .get()
        .asString()
        .contains("W3 on zookeeper")
        .contains("not definitely rejected");
  }

  // Guarantee: the anchors' leader kills get rows of their own in the failover table and in --json.
  @Test
  void anchorLeaderKillsAreReportedPerSystem() {
    BenchReport r = report();
    r.anchorLeaderKills.put(
        BenchReport.ZOOKEEPER,
        java.util.List.of(
            new Failover.LeaderKill("zk2", 2100, 2300, -1),
            new Failover.LeaderKill("zk1", 1900, 2000, -1),
            new Failover.LeaderKill("zk3", 2500, 2600, -1)));
    String tables = String.join("\n", r.tables());
    assertThat(tables)
        .contains(
            "| ZooKeeper: leader kill -9 → every writer has a write acknowledged again |"
                + " 2300, 2000, 2600 | 2300 |");
    assertThat(
            r.toJson()
                .path("failover")
                .path("anchor_leader_kill")
                .path("zookeeper")
                .get(1)
                .path("killed")
                .asText())
        .isEqualTo("zk1");
  }

  // Guarantee: the hand-off figures get a table of their own, one row per system, and a JSON array.
  @Test
  void handOffsAreReportedPerSystem() {
    BenchReport r = report();
    Histogram fk = new Histogram(3);
    fk.recordValue(40_000);
    Histogram zk = new Histogram(3);
    zk.recordValue(8_000);
    r.handOffs.add(new HandOff.Figures(BenchReport.FENCEKEEPER, 16, 200, 0, 2.0, fk));
    r.handOffs.add(new HandOff.Figures(BenchReport.ZOOKEEPER, 16, 600, 1, 2.0, zk));
    String tables = String.join("\n", r.tables());
    assertThat(tables)
        .contains(
            "### W6 hand-off (one resource, queued waiters)",
            "| fencekeeper | 16 | 100 | 40.03 | 40.03 | 0 |",
            "| zookeeper | 16 | 300 | 8.00 | 8.00 | 1 |");
    var json = r.toJson().get("handoffs");
    assertThat(json.get(1).get("system").asText()).isEqualTo("zookeeper");
    assertThat(json.get(1).get("handoffs_per_sec").asDouble()).isEqualTo(300.0);
    assertThat(json.get(0).get("p50_ms").asDouble()).isEqualTo(40.031);
  }

  // Guarantee: with --phases cold,settled each workload has a cold and a settled table, each
  // phase its own fencekeeper/ZooKeeper/etcd ratios, and --json keeps `results` for the settled
  // phase while `cold_results` and `cold_anchor_ratios` carry the cold one, each row saying its
  // phase.
  @Test
  void coldAndSettledAreReportedSideBySide() {
    BenchReport r = report();
    r.phases = java.util.List.of(Phase.COLD, Phase.SETTLED);
    r.coldWarmup = java.time.Duration.ofSeconds(15);
    r.coldRuns.add(run(BenchReport.FENCEKEEPER, Workload.W2, 64, 6000, 0, 0, 30_000));
    r.coldRuns.add(run(BenchReport.ZOOKEEPER, Workload.W2, 64, 8000, 0, 0, 16_000));
    r.coldRuns.add(run(BenchReport.ETCD, Workload.W2, 64, 5000, 0, 0, 30_000));
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W2, 64, 15000, 0, 0, 9_000));
    r.runs.add(run(BenchReport.ZOOKEEPER, Workload.W2, 64, 8200, 0, 0, 13_000));

    String tables = String.join("\n", r.tables());
    assertThat(tables)
        .contains(
            "### W2 fenced writes (writes), cold",
            "after 15 s of load on its freshly started cluster",
            "### W2 fenced writes (writes), settled",
            "### fencekeeper / ZooKeeper, etcd (same run, cold)",
            "| W2 | 64 | 6,000 (30.02) | 8,000 (16.01) | 0.75× | 5,000 (30.02) | 1.20× |",
            "### fencekeeper / ZooKeeper (same run, settled)",
            "| W2 | 64 | 15,000 (9.01) | 8,200 (13.01) | 1.83× |");
    assertThat(tables.indexOf(", cold")).isLessThan(tables.indexOf(", settled"));

    var json = r.toJson();
    assertThat(json.path("phases").toString()).isEqualTo("[\"cold\",\"settled\"]");
    assertThat(json.path("cold_warmup_s").asDouble()).isEqualTo(15.0);
    assertThat(json.path("results")).hasSize(2);
    assertThat(json.path("results").get(0).path("phase").asText()).isEqualTo("settled");
    assertThat(json.path("results").get(0).path("ops_per_sec").asDouble()).isEqualTo(15000.0);
    assertThat(json.path("cold_results")).hasSize(3);
    assertThat(json.path("cold_results").get(1).path("phase").asText()).isEqualTo("cold");
    assertThat(json.path("cold_results").get(1).path("system").asText()).isEqualTo("zookeeper");
    assertThat(json.path("anchor_ratios").get(0).path("fencekeeper_per_zookeeper").asDouble())
        .isEqualTo(1.829);
    assertThat(json.path("cold_anchor_ratios").get(0).path("fencekeeper_per_zookeeper").asDouble())
        .isEqualTo(0.75);
    assertThat(json.path("cold_anchor_ratios").get(0).path("fencekeeper_per_etcd").asDouble())
        .isEqualTo(1.2);

    // Only the settled phase (the default): the tables read as they always have.
    BenchReport settled = report();
    settled.runs.add(run(BenchReport.FENCEKEEPER, Workload.W2, 64, 15000, 0, 0, 9_000));
    assertThat(String.join("\n", settled.tables()))
        .contains("### W2 fenced writes (writes)\n")
        .doesNotContain(", settled", ", cold");
    assertThat(settled.toJson().path("cold_results")).isEmpty();
  }

  // Guarantee: the cold-start targets are checked against the cold figures, fencekeeper against
  // ZooKeeper in the same run, each miss said with by how much; without a cold phase they say so.
  @Test
  void coldTargetsCompareFencekeeperWithZooKeeper() {
    BenchReport r = report();
    r.coldRuns.add(run(BenchReport.FENCEKEEPER, Workload.W2, 64, 11_165, 0, 0, 15_000));
    r.coldRuns.add(run(BenchReport.ZOOKEEPER, Workload.W2, 64, 7_700, 0, 0, 16_600));
    r.coldRuns.add(run(BenchReport.FENCEKEEPER, Workload.W2, 1, 440, 0, 0, 1_620));
    r.coldRuns.add(run(BenchReport.ZOOKEEPER, Workload.W2, 1, 1_740, 0, 0, 550));
    r.coldRuns.add(run(BenchReport.FENCEKEEPER, Workload.W1, 64, 3_621, 0, 0, 47_000));
    r.coldRuns.add(run(BenchReport.ZOOKEEPER, Workload.W1, 64, 2_702, 0, 0, 39_500));
    // Settled figures that would meet every target: the cold ones decide.
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W2, 1, 2_000, 0, 0, 300));
    r.runs.add(run(BenchReport.ZOOKEEPER, Workload.W2, 1, 1_740, 0, 0, 550));
    r.leaderKills.add(new Failover.LeaderKill("n1", 300, 900, 1));
    r.anchorLeaderKills.put(
        BenchReport.ZOOKEEPER, java.util.List.of(new Failover.LeaderKill("zk1", 1900, 2000, -1)));

    var rows = r.coldTargetRows();
    assertThat(rows.stream().map(BenchReport.TargetRow::markdown))
        .containsExactly(
            "| W2 at 64 workers ≥ 1.5× ZooKeeper's writes/s | 1.45× (11,165 vs 7,700/s) |"
                + " **missed** by 0.05× (1.0×) |",
            "| W2 at 64 workers p99 ≤ ZooKeeper's | 15 ms (ZooKeeper 16.61 ms) | met |",
            "| W2 at 1 worker p50 ≤ ZooKeeper's | 1.62 ms (ZooKeeper 0.55 ms) | **missed** by"
                + " 1.07ms (2.9×) |",
            "| W1 at 64 workers ≥ 1.5× ZooKeeper's cycles/s | 1.34× (3,621 vs 2,702/s) |"
                + " **missed** by 0.16× (1.1×) |",
            "| leader kill -9 → every writer writing again ≤ ZooKeeper's, median (measured once,"
                + " after the sweeps) | 900 ms (ZooKeeper 2000 ms) | met |");
    assertThat(r.toJson().path("cold_targets").get(2).path("met").asBoolean()).isFalse();
    assertThat(r.toJson().path("cold_targets").get(1).path("met").asBoolean()).isTrue();
    assertThat(r.document(null))
        .contains("## Targets against ZooKeeper, cold", "| W2 at 1 worker p50 ≤ ZooKeeper's |");

    BenchReport none = report();
    none.runs.add(run(BenchReport.FENCEKEEPER, Workload.W2, 64, 12_000, 0, 0, 15_000));
    assertThat(none.coldTargetRows())
        .allSatisfy(t -> assertThat(t.measured()).startsWith("not run"));
    assertThat(none.coldTargetRows().get(0).measured()).isEqualTo("not run (no --phases cold)");
  }

  // Guarantee: a stale write accepted in the cold phase fails the run as one in the settled phase
  // does, and says which phase.
  @Test
  void w3FailsOnAStaleWriteAcceptedInTheColdPhase() {
    BenchReport r = report();
    r.runs.add(run(BenchReport.FENCEKEEPER, Workload.W3, 4, 100, 0, 0, 500));
    r.coldRuns.add(run(BenchReport.ZOOKEEPER, Workload.W3, 4, 99, 1, 1, 500));
    assertThat(r.w3Failure())
        .get()
        .asString()
        .isEqualTo("W3 on zookeeper (cold) at 4 workers: 1 stale writes were ACCEPTED");
  }

  // Guarantee: --phases takes cold, settled or both, in either order (measured cold first), and
  // refuses anything else with the names it takes.
  @Test
  void phasesAreParsedAndChecked() {
    assertThat(Phase.parse("settled")).containsExactly(Phase.SETTLED);
    assertThat(Phase.parse("settled, cold")).containsExactly(Phase.COLD, Phase.SETTLED);
    for (String bad : java.util.List.of("", "warm", "cold,", "cold,,settled")) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> Phase.parse(bad))
          .isInstanceOf(dev.fencekeeper.config.ConfigException.class)
          .hasMessageContaining("--phases")
          .hasMessageContaining("cold, settled or cold,settled");
    }
  }

  // Guarantee: the cost curve's figures are in the tables and in --json, and the document links
  // its chart.
  @Test
  void costCurveIsTabledAndLinked() {
    BenchReport r = report();
    r.costCurve =
        new CostCurve.Figures(
            java.util.List.of(new CostCurve.WorkerPoint(1024, 33_000, 95.5)),
            java.util.List.of(
                new StateSize.Figures(
                    10_000,
                    10,
                    64,
                    0.5,
                    java.util.List.of(
                        new StateSize.Node("n1", 17_000_000, 21_000_000, 20_000_000, 40, 1)),
                    3_000,
                    3_100)));
    r.costCurveImage = "benchmarks-cost-curve.png";
    assertThat(String.join("\n", r.tables()))
        .contains(
            "### Cost curve", "| 1024 | 33,000 | 95.50 |", "| 10,000 | 0.5 | 21.0 | 0.04 | 3.10 |");
    assertThat(r.document(null)).contains("](benchmarks-cost-curve.png)");
    var json = r.toJson().path("cost_curve");
    assertThat(json.path("chart").asText()).isEqualTo("benchmarks-cost-curve.png");
    assertThat(json.path("workers").get(0).path("ops_per_sec").asDouble()).isEqualTo(33_000.0);
    assertThat(json.path("state").get(0).path("max_heap_mb").asDouble()).isEqualTo(21.0);
    assertThat(r.document(null)).doesNotContain("earlier run");

    // A run without --cost-curve keeps linking the chart an earlier run drew, saying so.
    BenchReport later = report();
    later.costCurveImage = "benchmarks-cost-curve.png";
    assertThat(later.document(null))
        .contains(
            "### Cost curve\n\nDrawn by an earlier run with `--cost-curve`",
            "](benchmarks-cost-curve.png)");
    assertThat(later.toJson().has("cost_curve")).isFalse();
  }
}
