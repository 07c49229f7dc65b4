package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertAll;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every drill, short, through {@code ./fencekeeper drill} as a user runs it: real node processes,
 * real faults (partition: real network namespaces; CI runs as root), and the checker's verdict.
 * Plus the deliberately broken build, which must fail.
 *
 * <p>Two drills run at a time (the parallelism is in this module's failsafe configuration): a drill
 * mostly waits out its faults, each picks its own ports, data directory and namespaces, and its
 * checker judges safety, which load does not excuse.
 */
@Execution(ExecutionMode.CONCURRENT)
class DrillsIT {
  /**
   * How long a drill injects its faults. The drills that repeat their fault while the duration
   * leaves room for another round get 12 s: at least one full round on a loaded machine.
   */
  private static final String DURATION = "12s";

  /**
   * The drills whose faults are a fixed schedule run in full however short the duration (one
   * stale-writer round, one rolling restart, one join and removal, both disk fillings): a longer
   * duration would only add fault-free load after it.
   */
  private static final Set<String> FIXED_SCHEDULE =
      Set.of("stale-writer", "rolling-restart", "membership", "disk-full");

  private static final String FIXED_SCHEDULE_DURATION = "1s";

  /**
   * leader-kill runs long enough for two kills and the renewals after each: the holders must keep
   * their leases through repeated failovers, not one. Each round waits for the killed node to
   * restart and catch up before the next kill (so that the renewing holders are tested on
   * failovers, not on a lost majority), which took about 24 s beside the rest of the suite on two
   * cores; longer soaks are for the command line (`--duration 3m`).
   */
  private static final String LEADER_KILL_DURATION = "50s";

  private static final int LEADER_KILLS = 2;
  private static final long SEED = 20261129;
  private static final Duration RUN_TIMEOUT = Duration.ofMinutes(4);
  private static final ObjectMapper MAPPER = new ObjectMapper();

  @TempDir Path scratch;

  private record Run(int exit, JsonNode report, String stderr) {}

  /**
   * Runs {@code ./fencekeeper drill NAME} as a user would; or, when {@code unfenced}, the same
   * drill from this test's class path with nodes that accept stale writes ({@link
   * dev.fencekeeper.tools.drill.UnfencedDrill}).
   */
  private Run drill(String name, boolean unfenced) throws IOException, InterruptedException {
    Path root = LocalUp.repoRoot();
    Path out = scratch.resolve(name + ".json");
    Path err = scratch.resolve(name + ".err");
    List<String> command = new ArrayList<>();
    if (unfenced) {
      command.addAll(
          List.of(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-Xmx256m",
              // Logback reports its own status on stdout when it finds a logback-test.xml in more
              // than one test jar; stdout must hold the report alone.
              "-Dlogback.statusListenerClass=ch.qos.logback.core.status.NopStatusListener",
              "-cp",
              System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
              dev.fencekeeper.tools.drill.UnfencedDrill.class.getName()));
    } else {
      command.addAll(List.of("./fencekeeper", "drill"));
    }
    command.addAll(
        List.of(
            name,
            "--duration",
            FIXED_SCHEDULE.contains(name)
                ? FIXED_SCHEDULE_DURATION
                : name.equals("leader-kill") ? LEADER_KILL_DURATION : DURATION,
            "--seed",
            Long.toString(SEED),
            "--json"));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(root.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    // Maven built the jar moments ago in this run; a launcher-triggered build would rebuild it
    // under us.
    builder.environment().put("FENCEKEEPER_SKIP_BUILD", "1");
    Process process = builder.start();
    if (!process.waitFor(RUN_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      // SIGTERM first: the drill's shutdown hook stops its nodes and deletes its namespaces.
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
    String stderr = Files.readString(err, StandardCharsets.UTF_8);
    String stdout = Files.readString(out, StandardCharsets.UTF_8).trim();
    JsonNode report = stdout.isEmpty() ? MAPPER.createObjectNode() : MAPPER.readTree(stdout);
    return new Run(process.isAlive() ? -1 : process.exitValue(), report, stderr);
  }

  private static String explain(Run run) {
    String tail =
        run.stderr().length() > 4000
            ? run.stderr().substring(run.stderr().length() - 4000)
            : run.stderr();
    return "report: " + run.report().toPrettyString() + "\n--- stderr (tail)\n" + tail;
  }

  /**
   * Each drill alone, except the two that restart nodes the most: rolling-restart and disk-full run
   * one after the other. Side by side, each one's restarted nodes took three times as long to catch
   * up, and the two drills about 100 s each instead of 43 s and 31 s alone. The pair is listed
   * first so that it starts first: it is the longest run.
   */
  static Stream<List<String>> drills() {
    return Stream.of(
        List.of("rolling-restart", "disk-full"),
        List.of("stale-writer"),
        List.of("leader-kill"),
        List.of("leader-pause"),
        List.of("restart-all"),
        List.of("clock-skew"),
        List.of("membership"),
        List.of("partition"));
  }

  // Guarantee: under each drill's faults the history checker finds no violation, and the drill
  // exits 0.
  @ParameterizedTest(name = "{0}")
  @MethodSource("drills")
  @Timeout(600)
  void everyDrillPasses(List<String> names) {
    assertAll(names.stream().map(name -> () -> drillPasses(name)));
  }

  private void drillPasses(String name) throws Exception {
    Run run = drill(name, false);

    assertThat(run.exit()).as(explain(run)).isZero();
    assertThat(run.report().path("verdict").asText()).as(explain(run)).isEqualTo("PASS");
    assertThat(run.report().path("events_complete").asBoolean()).as(explain(run)).isTrue();
    assertThat(run.report().path("ops").path("write").path("ok").asInt())
        .as(explain(run))
        .isPositive();
    // A drill whose fault never happened proves nothing, whatever its duration.
    if (name.equals("stale-writer")) {
      List<String> rows = new ArrayList<>();
      run.report().path("stale_writer_timeline").forEach(row -> rows.add(row.asText()));
      assertThat(rows).as(explain(run)).anyMatch(row -> row.contains(" T6  A resumes"));
    } else {
      int faults = 0;
      for (JsonNode mark : run.report().path("timeline")) {
        faults += mark.path("fault").asBoolean() ? 1 : 0;
      }
      assertThat(faults).as("faults injected; %s", explain(run)).isPositive();
    }
    if (name.equals("leader-kill")) {
      holdersRenewedThroughEveryKill(run);
    }
  }

  // Guarantee (leader-kill): a holder renewing a 3 s lease through the client's session keeps it
  // through every leader kill -9 (a `lease hold` process and a Lease in the drill's JVM; a lost one
  // fails the verdict above), and the new leader renewed it after each kill. The kill -> renewal
  // times are printed: the target is under a third of the TTL (docs/benchmarks.md).
  private static void holdersRenewedThroughEveryKill(Run run) {
    List<Long> renewals = new ArrayList<>();
    run.report().path("renewal_after_kill_ms").forEach(w -> renewals.add(w.path("ms").asLong()));
    System.out.println("leader-kill: kill -9 -> first renewal of a 3 s lease, ms: " + renewals);
    assertThat(renewals)
        .as("leader kills; %s", explain(run))
        .hasSizeGreaterThanOrEqualTo(LEADER_KILLS);
    assertThat(renewals).as("renewed after every kill; %s", explain(run)).allMatch(ms -> ms >= 0);
  }

  // Guarantee: the checker can fail: nodes that accept stale writes (a test-only state machine on
  // the test class path; the shipped server has no such switch) let A's stale write in, and the
  // drill says so (exit 18, the stale write among the violations, a replay command with the seed).
  @Test
  @Timeout(300)
  void nodesWithoutFencingFailTheStaleWriterDrill() throws Exception {
    Run run = drill("stale-writer", true);

    assertThat(run.exit()).as(explain(run)).isEqualTo(ExitCode.CHECK_FAILED.code());
    assertThat(run.report().path("verdict").asText()).as(explain(run)).isEqualTo("FAIL");
    List<String> kinds = new ArrayList<>();
    run.report().path("violations").forEach(v -> kinds.add(v.path("kind").asText()));
    assertThat(kinds).as(explain(run)).contains("STALE_WRITE_ACCEPTED");
    assertThat(run.report().path("replay").asText()).contains("--seed " + SEED);
    deleteTree(Path.of(run.report().path("data_dir").asText()));
  }

  /** A failing drill keeps its files for whoever investigates; this failure was the point. */
  private static void deleteTree(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
