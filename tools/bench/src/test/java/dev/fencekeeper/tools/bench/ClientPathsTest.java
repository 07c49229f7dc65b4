package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which client path each workload takes, how the rows of each path are labelled, and which rows the
 * ratios and targets compare.
 */
class ClientPathsTest {
  @TempDir Path dir;

  static Measurement row(String system, Workload w, int c, long ops, ClientApi api) {
    Histogram h = new Histogram(3);
    for (int i = 0; i < ops; i++) {
      h.recordValue(1000);
    }
    return new Measurement(
        system, w, c, 1, ops, 0, ops, 0, 1.0, h, 100, 200, 50, 0, Map.of(), api, 3 * ops);
  }

  private static BenchReport report(List<ClientApi> apis) {
    BenchReport r = new BenchReport("./fencekeeper bench", ClusterConfig.local(7301), "test");
    r.apis = apis;
    return r;
  }

  // Guarantee: --api is read in the order given (the first path is the one compared); unknown,
  // repeated and empty names are refused.
  @Test
  void apiFlagKeepsTheOrderAndRefusesBadNames() {
    assertThat(ClientApi.parse("lease")).containsExactly(ClientApi.LEASE);
    assertThat(ClientApi.parse("raw, lease")).containsExactly(ClientApi.RAW, ClientApi.LEASE);
    assertThat(ClientApi.parse("lease,raw")).containsExactly(ClientApi.LEASE, ClientApi.RAW);
    assertThatThrownBy(() -> ClientApi.parse("lease,,raw"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'' is not known");
    assertThatThrownBy(() -> ClientApi.parse("LEASE")).isInstanceOf(ConfigException.class);
    assertThatThrownBy(() -> ClientApi.parse("lease,lease")).hasMessageContaining("named twice");
  }

  // Guarantee: by default W1, W2, W3 and W6 go through the Lease API; raw adds W1, W2 and W3 only
  // (W6 has no token-level blocking acquire); W4 and W5 take their one path whatever is chosen.
  @Test
  void workloadsTakeTheLeaseApiByDefault() {
    List<ClientApi> byDefault = ClientApi.parse(ClientApi.DEFAULT_NAMES);
    assertThat(byDefault).containsExactly(ClientApi.LEASE);
    for (Workload w : List.of(Workload.W1, Workload.W2, Workload.W3, Workload.W6)) {
      assertThat(w.pathsFor(byDefault)).as("%s", w).containsExactly(ClientApi.LEASE);
    }
    for (Workload w : List.of(Workload.W4, Workload.W5)) {
      assertThat(w.pathsFor(byDefault)).as("%s", w).containsExactly(ClientApi.RAW);
    }
    List<ClientApi> both = ClientApi.parse("lease,raw");
    assertThat(Workload.W2.pathsFor(both)).containsExactly(ClientApi.LEASE, ClientApi.RAW);
    assertThat(Workload.W6.pathsFor(both)).containsExactly(ClientApi.LEASE);
    assertThat(Workload.W6.pathsFor(ClientApi.parse("raw"))).containsExactly(ClientApi.LEASE);
    assertThat(Workload.W3.pathsFor(ClientApi.parse("raw,lease")))
        .containsExactly(ClientApi.RAW, ClientApi.LEASE);
    assertThatThrownBy(
            () -> Workload.W6.worker(null, "r", 0, 1, 1, Duration.ofSeconds(1), ClientApi.RAW))
        .isInstanceOf(IllegalArgumentException.class);
  }

  // Guarantee: a raw-token row is labelled as such in the tables and says "raw" in the JSON's api
  // field, a Lease API row says "lease", another system's row null; the fields that were there
  // keep their names.
  @Test
  void rowsNameTheirPath() {
    BenchReport r = report(List.of(ClientApi.LEASE, ClientApi.RAW));
    r.runs.add(row(BenchReport.FENCEKEEPER, Workload.W2, 16, 1000, ClientApi.LEASE));
    r.runs.add(row(BenchReport.FENCEKEEPER, Workload.W2, 16, 1500, ClientApi.RAW));
    r.runs.add(row(BenchReport.FENCEKEEPER, Workload.W4, 16, 2000, ClientApi.RAW));
    r.runs.add(row(BenchReport.RATIS, Workload.W2, 16, 2000, null));

    String tables = String.join("\n", r.tables());
    assertThat(tables)
        .contains("| fencekeeper | 16 | 1,000 |")
        .contains("| fencekeeper (raw token) | 16 | 1,500 |")
        // W4 has one path: nothing to tell apart.
        .contains("| fencekeeper | 16 | 2,000 |")
        .doesNotContain("| fencekeeper (raw token) | 16 | 2,000 |");

    JsonNode json = r.toJson();
    assertThat(json.path("apis").toString()).isEqualTo("[\"lease\",\"raw\"]");
    JsonNode results = json.path("results");
    assertThat(results).hasSize(4);
    assertThat(results.get(0).path("api").asText()).isEqualTo("lease");
    assertThat(results.get(1).path("api").asText()).isEqualTo("raw");
    assertThat(results.get(3).has("api")).isTrue();
    assertThat(results.get(3).path("api").isNull()).isTrue();
    for (JsonNode result : results) {
      assertThat(result.fieldNames())
          .toIterable()
          .contains(
              "phase",
              "system",
              "workload",
              "concurrency",
              "clients",
              "ops",
              "ops_per_sec",
              "failed",
              "p50_ms",
              "p99_ms",
              "server_cpu_us_per_op",
              "elections",
              "failures",
              "api",
              "applied_entries");
    }
    assertThat(results.get(1).path("applied_entries").asLong()).isEqualTo(4500);
    assertThat(r.document(null))
        .contains("- Client path: W1, W2, W3 and W6 go through the Java client's Lease API")
        .contains("also through the token-level path")
        .contains("ratios and targets use the Lease API rows");
  }

  // Guarantee: the ratios against bare Ratis and the targets compare the first path of --api,
  // never the extra raw-token row measured beside it.
  @Test
  void ratiosAndTargetsCompareTheFirstPath() {
    BenchReport r = report(List.of(ClientApi.LEASE, ClientApi.RAW));
    r.runs.add(row(BenchReport.FENCEKEEPER, Workload.W2, 64, 1000, ClientApi.LEASE));
    r.runs.add(row(BenchReport.FENCEKEEPER, Workload.W2, 64, 9000, ClientApi.RAW));
    r.runs.add(row(BenchReport.RATIS, Workload.W2, 64, 2000, null));

    assertThat(r.ratios()).hasSize(1);
    assertThat(r.ratios().get(0).fencekeeper()).isEqualTo(1000.0);
    assertThat(r.toJson().path("baseline_ratios")).hasSize(1);
    assertThat(String.join("\n", r.targets()))
        .contains("| W2 at 64 workers ≥ 8,000 writes/s (aim 16,000) | 1,000/s |");

    BenchReport rawFirst = report(List.of(ClientApi.RAW, ClientApi.LEASE));
    rawFirst.runs.add(row(BenchReport.FENCEKEEPER, Workload.W2, 64, 9000, ClientApi.RAW));
    rawFirst.runs.add(row(BenchReport.FENCEKEEPER, Workload.W2, 64, 1000, ClientApi.LEASE));
    rawFirst.runs.add(row(BenchReport.RATIS, Workload.W2, 64, 2000, null));
    assertThat(rawFirst.ratios())
        .singleElement()
        .extracting(BenchReport.Ratio::fencekeeper)
        .isEqualTo(9000.0);
  }

  // Guarantee: a W3 stale write accepted through the raw path fails the bench and says which path.
  @Test
  void staleWriteOnTheRawPathFailsTheBenchNamingIt() {
    BenchReport r = report(List.of(ClientApi.LEASE, ClientApi.RAW));
    r.runs.add(row(BenchReport.FENCEKEEPER, Workload.W3, 2, 10, ClientApi.LEASE));
    Measurement raw = row(BenchReport.FENCEKEEPER, Workload.W3, 2, 9, ClientApi.RAW);
    r.runs.add(
        new Measurement(
            raw.system(),
            raw.workload(),
            2,
            1,
            9,
            1,
            10,
            1,
            1.0,
            raw.micros(),
            1,
            1,
            1,
            0,
            Map.of("stale write ACCEPTED", 1L),
            ClientApi.RAW,
            10));
    assertThat(r.w3Failure()).get().asString().contains("W3 (raw token) at 2 workers: 1 stale");
  }

  // Guarantee: --node-w2 names the missing `node` rather than failing half-way through a run.
  @Test
  void nodeW2WithoutNodeSaysSo() throws Exception {
    Files.createDirectories(dir.resolve("bench"));
    Files.writeString(dir.resolve("bench/w2.mjs"), "");
    Files.createDirectories(dir.resolve("dist"));
    Files.writeString(dir.resolve("dist/index.js"), "");
    assertThatThrownBy(() -> NodeW2.check(dir, "fencekeeper-no-such-node"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "--node-w2 needs Node.js 20 or later: `fencekeeper-no-such-node`"
                + " could not be run");
  }
}
