package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A few seconds of {@code ./fencekeeper bench}, run as a user would, so the bench cannot rot: every
 * workload and the baseline run against real node processes, the JSON and the generated document
 * are well-formed, and W3's stale writes are all rejected. Figures are not checked: CI machines are
 * not benchmark machines.
 */
class BenchSmokeIT {
  private static final String KEPT = "Profile notes written by hand survive regeneration.";

  @TempDir Path scratch;

  // Guarantee: a short bench of every workload, cold and settled, exits 0 with one well-formed JSON
  // object, the cold phase running what the settled one does, W1-W3 through both the Lease API
  // and the raw token path (W6 the Lease API), each row naming its path, W3 100 % rejected on
  // every path in both phases,
  // the state figures (heap, snapshot, restart) are measured on 2000 keys, and regenerating the
  // document keeps its hand-written profile section.
  @Test
  @Timeout(value = 360, unit = TimeUnit.SECONDS)
  void shortBenchOfEveryWorkloadIsWellFormedAndRejectsEveryStaleWrite() throws Exception {
    Path root =
        Path.of(System.getProperty("fencekeeper.repo.root", "../..")).toAbsolutePath().normalize();
    assertThat(root.resolve("tools/bench/target/fencekeeper-bench.jar"))
        .as("run in `verify`, after `package`")
        .exists();
    Path doc = scratch.resolve("benchmarks.md");
    Files.writeString(
        doc,
        "# old\n"
            + BenchReport.PRESERVED_BEGIN
            + "\n"
            + KEPT
            + "\n"
            + BenchReport.PRESERVED_END
            + "\n");

    List<String> command =
        new ArrayList<>(
            List.of(
                "./fencekeeper",
                "bench",
                "--workload",
                "all",
                "--api",
                "lease,raw",
                "--concurrency",
                "2",
                "--duration",
                "1s",
                // The figures are not checked: no more load before each window than it takes to
                // start the workers.
                "--warmup",
                "200ms",
                "--leases",
                "20",
                "--failover-trials",
                "0",
                "--jit-warmup",
                "1s",
                "--phases",
                "cold,settled",
                "--cold-warmup",
                "200ms",
                "--baseline",
                "ratis",
                "--state-keys",
                "2000",
                "--json",
                "--output",
                doc.toString()));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(root.toFile())
            .redirectError(scratch.resolve("stderr.txt").toFile())
            .redirectOutput(scratch.resolve("stdout.txt").toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    builder.environment().put("FENCEKEEPER_SKIP_BUILD", "1");
    Process bench = builder.start();
    boolean ended = bench.waitFor(330, TimeUnit.SECONDS);
    if (!ended) {
      bench.descendants().forEach(ProcessHandle::destroyForcibly);
      bench.destroyForcibly();
    }
    String stderr = Files.readString(scratch.resolve("stderr.txt"), StandardCharsets.UTF_8);
    assertThat(ended).as("bench ended; stderr:%n%s", stderr).isTrue();
    assertThat(bench.exitValue()).as("exit code; stderr:%n%s", stderr).isZero();

    List<String> lines = Files.readAllLines(scratch.resolve("stdout.txt"));
    assertThat(lines).as("one JSON object on stdout").hasSize(1);
    JsonNode report = new ObjectMapper().readTree(lines.get(0));
    assertThat(report.path("status").asText()).isEqualTo("OK");
    List<String> ran = new ArrayList<>();
    List<String> ranCold = new ArrayList<>();
    for (JsonNode r : report.path("cold_results")) {
      ranCold.add(
          r.path("system").asText()
              + " "
              + r.path("workload").asText()
              + " "
              + r.path("api").asText());
      assertThat(r.path("phase").asText()).isEqualTo("cold");
      if (r.path("workload").asText().equals("W3")) {
        assertThat(r.path("stale_writes").asLong()).as("cold W3 made stale writes").isPositive();
        assertThat(r.path("rejected_pct").asDouble()).isEqualTo(100.0);
      }
    }
    for (JsonNode r : report.path("results")) {
      assertThat(r.path("phase").asText()).isEqualTo("settled");
      ran.add(
          r.path("system").asText()
              + " "
              + r.path("workload").asText()
              + " "
              + r.path("api").asText());
      assertThat(r.path("concurrency").asInt()).isEqualTo(2);
      assertThat(r.has("p99_ms") && r.has("ops_per_sec") && r.has("server_cpu_us_per_op")).isTrue();
      // The compilers' share is read from the node JVMs' threads: known for a cluster the bench
      // started.
      assertThat(r.path("server_jit_cpu_ms").asLong(-1)).as("JIT CPU of %s", r).isNotNegative();
      if (r.path("workload").asText().equals("W3")) {
        assertThat(r.path("stale_writes").asLong()).as("W3 made stale writes").isPositive();
        assertThat(r.path("stale_accepted").asLong()).isZero();
        assertThat(r.path("rejected_pct").asDouble()).isEqualTo(100.0);
      }
    }
    assertThat(ran)
        .containsExactlyInAnyOrder(
            "fencekeeper W1 lease",
            "fencekeeper W1 raw",
            "fencekeeper W2 lease",
            "fencekeeper W2 raw",
            "fencekeeper W3 lease",
            "fencekeeper W3 raw",
            "fencekeeper W4 raw",
            "fencekeeper W5 raw",
            "fencekeeper W6 lease",
            "ratis-counter W2 null",
            "ratis-counter W4 null");
    assertThat(ranCold).as("the cold phase runs what the settled one does").isEqualTo(ran);
    assertThat(report.path("phases").toString()).isEqualTo("[\"cold\",\"settled\"]");
    assertThat(report.path("cold_targets")).hasSize(5);
    assertThat(report.path("baseline_ratios")).hasSize(2);
    assertThat(report.path("jit_warmup").asText()).contains("1 round(s)", "JIT compilers used");

    JsonNode state = report.path("state");
    assertThat(state.path("keys").asInt()).isEqualTo(2000);
    assertThat(state.path("resources").asInt()).isEqualTo(2);
    assertThat(state.path("nodes")).hasSize(3);
    for (JsonNode node : state.path("nodes")) {
      // A node holding 2000 keys has a heap, a snapshot of at least their values, and took some
      // time for it.
      assertThat(node.path("heap_loaded_mb").asDouble()).as("heap of %s", node).isPositive();
      assertThat(node.path("heap_restarted_mb").asDouble()).as("heap of %s", node).isPositive();
      assertThat(node.path("snapshot_bytes").asLong()).isGreaterThan(2000L * 100);
      assertThat(node.path("snapshot_ms").asLong()).isNotNegative();
    }
    assertThat(state.path("restart_read_ms").asLong())
        .as("read served after the restart")
        .isPositive();
    assertThat(state.path("restart_write_ms").asLong())
        .as("write served after the restart")
        .isPositive();

    String written = Files.readString(doc);
    assertThat(written)
        .startsWith("# Benchmarks")
        .contains(
            "## Method",
            "## Machine",
            "## Targets",
            "### W3 stale replay",
            "### W3 stale replay (stale writes), cold",
            "| fencekeeper (raw token) | 2 |",
            "- Client path: W1, W2, W3 and W6 go through the Java client's Lease API",
            "## Targets against ZooKeeper, cold",
            "### fencekeeper / bare Ratis",
            "### State size: 2,000 keys of 100 bytes",
            "2,000 keys (target: 1,000,000) of 100 bytes: heap per node ≤ 400 MB",
            KEPT);
    assertThat(written).doesNotContain("# old");
  }
}
