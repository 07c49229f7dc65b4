package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import java.time.Duration;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** The many-leases figures as JSON and as a table. */
class ManyLeasesTest {
  private static Measurement w2(long ops, long applied, long serverCpuMs) {
    Histogram h = new Histogram(3);
    for (int i = 0; i < ops; i++) {
      h.recordValue(2000);
    }
    return new Measurement(
        BenchReport.FENCEKEEPER,
        Workload.W2,
        16,
        1,
        ops,
        3,
        ops + 3,
        0,
        10.0,
        h,
        4000,
        serverCpuMs,
        0,
        0,
        Map.of(),
        ClientApi.LEASE,
        applied);
  }

  static ManyLeases.Figures figures() {
    return new ManyLeases.Figures(
        10_000,
        Duration.ofSeconds(10),
        9_990,
        12.5,
        Map.of("FencingException", 10L),
        w2(40_000, 20_000, 15_000),
        new ManyLeases.Idle(10.0, 30_000, 9_000, 5_000),
        new ManyLeases.Standing(9_000, 8_800, 200, 990),
        w2(10_000, 35_000, 18_000),
        new ManyLeases.Standing(7_000, 6_500, 500, 2_990),
        Map.of("DEADLINE_PASSED", 2_990L));
  }

  // Guarantee: the JSON says how many leases were asked for, acquired, still valid after each
  // window and lost why, the entries applied per second and the CPU of each window, and W2's
  // writes/s beside the leases over W2's alone.
  @Test
  void jsonCarriesEveryWindow() {
    BenchReport r = new BenchReport("./fencekeeper bench", ClusterConfig.local(7301), "test");
    r.manyLeases = figures();
    JsonNode json = r.toJson().path("many_leases");
    assertThat(json.path("leases").asInt()).isEqualTo(10_000);
    assertThat(json.path("ttl_s").asInt()).isEqualTo(10);
    assertThat(json.path("acquired").asInt()).isEqualTo(9_990);
    assertThat(json.path("acquire_failures").path("FencingException").asLong()).isEqualTo(10);
    assertThat(json.path("w2_alone").path("ops_per_sec").asDouble()).isEqualTo(4000.0);
    assertThat(json.path("w2_alone").path("applied_entries_per_sec").asDouble()).isEqualTo(2000.0);
    assertThat(json.path("w2_alone").path("server_cpu_ms").asLong()).isEqualTo(15_000);
    assertThat(json.path("leases_alone").path("applied_entries_per_sec").asDouble())
        .isEqualTo(3000.0);
    assertThat(json.path("leases_alone").path("leases_after").path("valid").asInt())
        .isEqualTo(9_000);
    assertThat(json.path("w2_with_leases").path("ops_per_sec").asDouble()).isEqualTo(1000.0);
    assertThat(json.path("w2_with_leases").path("leases_after").path("valid").asInt())
        .isEqualTo(7_000);
    assertThat(json.path("w2_with_leases").path("leases_after").path("lost").asInt())
        .isEqualTo(2_990);
    assertThat(json.path("w2_with_leases_per_alone").asDouble()).isEqualTo(0.25);
    assertThat(json.path("loss_reasons").path("DEADLINE_PASSED").asLong()).isEqualTo(2_990);
  }

  // Guarantee: the table shows each window's writes/s, entries applied/s, server cores and the
  // leases still valid of those acquired, and says the ratio and the losses in words.
  @Test
  void tableShowsEveryWindow() {
    BenchReport r = new BenchReport("./fencekeeper bench", ClusterConfig.local(7301), "test");
    r.manyLeases = figures();
    String tables = String.join("\n", r.tables());
    assertThat(tables)
        .contains("### Many leases: 10,000 held by one client")
        .contains("9,990 acquired in 12.5 s (failed: {FencingException=10})")
        .contains("| W2 alone | 4,000 | 2.00 | 3 | 2,000 | 1.50 | 0.40 | – | – | – |")
        .contains("| leases alone | – | – | – | 3,000 | 0.90 | 0.50 | 9,000 of 9,990 | 200 | 990 |")
        .contains(
            "| W2 beside the leases | 1,000 | 2.00 | 3 | 3,500 | 1.80 | 0.40 | 7,000 of 9,990 |"
                + " 500 | 2,990 |")
        .contains("W2 beside the leases did 25 % of W2 alone's writes/s.")
        .contains("Leases lost, by reason: {DEADLINE_PASSED=2990}.");
  }
}
