package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotLoadTest {
  @TempDir Path dir;

  /** A W2 window of 1 s: {@code ops} writes of {@code micros} each and one of {@code maxMicros}. */
  private static Measurement w2(long ops, long micros, long maxMicros, long serverCpuMs) {
    Histogram h = new Histogram(3);
    for (int i = 0; i < ops - 1; i++) {
      h.recordValue(micros);
    }
    h.recordValue(maxMicros);
    return new Measurement(
        BenchReport.FENCEKEEPER,
        Workload.W2,
        64,
        1,
        ops,
        0,
        ops,
        0,
        1.0,
        h,
        10,
        serverCpuMs,
        0,
        0,
        Map.of());
  }

  private static Map<String, Integer> byNode(int n1, int n2, int n3) {
    Map<String, Integer> m = new LinkedHashMap<>();
    m.put("n1", n1);
    m.put("n2", n2);
    m.put("n3", n3);
    return m;
  }

  static SnapshotLoad.Figures figures() {
    return new SnapshotLoad.Figures(
        1_000_000,
        1_000,
        64,
        64,
        false,
        new SnapshotLoad.Run(
            SnapshotLoad.FAR_APART_ENTRIES,
            80.5,
            6_000,
            w2(4_000, 1_000, 200_000, 400),
            byNode(0, 0, 0)),
        new SnapshotLoad.Run(6_000, 82.0, 5_800, w2(3_800, 1_100, 300_000, 420), byNode(2, 2, 1)));
  }

  // Guarantee: --snapshot-every below 1, or without --snapshot-load, and --snapshot-load against a
  // cluster the bench does not start are refused with one line naming the flag; the rest pass.
  @Test
  void flagsAreChecked() {
    assertThatThrownBy(() -> SnapshotLoad.validate(true, 0L, false))
        .isInstanceOf(ConfigException.class)
        .hasMessage("--snapshot-every: '0' must be ≥ 1, and needs --snapshot-load");
    assertThatThrownBy(() -> SnapshotLoad.validate(true, -5L, false))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("--snapshot-every: '-5'");
    assertThatThrownBy(() -> SnapshotLoad.validate(false, 1_000L, false))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("needs --snapshot-load");
    assertThatThrownBy(() -> SnapshotLoad.validate(true, null, true))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "--snapshot-load needs clusters the bench starts (not --endpoints)");
    assertThatCode(() -> SnapshotLoad.validate(true, 1L, false)).doesNotThrowAnyException();
    assertThatCode(() -> SnapshotLoad.validate(true, null, false)).doesNotThrowAnyException();
    assertThatCode(() -> SnapshotLoad.validate(false, null, true)).doesNotThrowAnyException();
  }

  // Guarantee: without --snapshot-every, the threshold makes one snapshot per 4 s at the entry
  // rate of the window without snapshots; no rate to go by is an error, not a snapshot per entry.
  @Test
  void thresholdFollowsTheMeasuredEntryRate() {
    assertThat(SnapshotLoad.entriesPerSnapshot(1_500.0)).isEqualTo(6_000);
    assertThat(SnapshotLoad.entriesPerSnapshot(0.1)).isEqualTo(1);
    assertThatThrownBy(() -> SnapshotLoad.entriesPerSnapshot(0))
        .hasMessageContaining("--snapshot-every");
    assertThatThrownBy(() -> SnapshotLoad.entriesPerSnapshot(Double.NaN))
        .hasMessageContaining("--snapshot-every");
  }

  // Guarantee: only finished snapshot files count, by the log index in their name; files being
  // written, MD5 files and the rest of the storage dir do not.
  @Test
  void snapshotFilesAreCountedByIndex() throws Exception {
    assertThat(SnapshotLoad.snapshotIndex("snapshot.3_12000")).isEqualTo(12_000);
    assertThat(SnapshotLoad.snapshotIndex("snapshot.3_12000.md5")).isEqualTo(-1);
    assertThat(SnapshotLoad.snapshotIndex("snapshot.3_12000.writing")).isEqualTo(-1);
    assertThat(SnapshotLoad.snapshotIndex("log_0-99")).isEqualTo(-1);

    Path sm = Files.createDirectories(dir.resolve("n1/0c8d-group/sm"));
    for (String name :
        new String[] {
          "snapshot.1_500", "snapshot.1_500.md5", "snapshot.2_900", "snapshot.2_1300.writing"
        }) {
      Files.writeString(sm.resolve(name), "x");
    }
    Files.writeString(dir.resolve("n1/node.log"), "x");
    assertThat(SnapshotLoad.snapshotIndices(dir.resolve("n1"))).containsExactly(500L, 900L);
    assertThat(SnapshotLoad.snapshotIndices(dir.resolve("missing"))).isEmpty();
  }

  // Guarantee: a window counts the snapshots of a state after its first entry up to its last, per
  // node, and none from before it (a snapshot taken during the load, still on disk).
  @Test
  void onlySnapshotsOfTheWindowCount() {
    Map<String, java.util.Set<Long>> seen = new LinkedHashMap<>();
    seen.put("n1", java.util.Set.of(400L, 1_000L, 1_263L, 1_526L));
    seen.put("n2", java.util.Set.of(1_000L, 1_001L));
    seen.put("n3", java.util.Set.of());
    assertThat(SnapshotLoad.countBetween(seen, 1_000, 1_526))
        .containsExactly(Map.entry("n1", 2), Map.entry("n2", 1), Map.entry("n3", 0));
  }

  // Guarantee: the Markdown section shows both windows side by side with every figure, the
  // snapshots per node, and the ratios of the tail latencies.
  @Test
  void tableShowsBothWindowsAndTheirRatios() {
    BenchReport r = new BenchReport("./fencekeeper bench", ClusterConfig.local(7301), "test");
    r.snapshotLoad = figures();
    String tables = String.join("\n", r.tables());
    assertThat(tables)
        .contains(
            "### Snapshots under load: W2 ×64 at 1,000,000 keys of 100 bytes",
            "(1,000 resources, 64 keys per write)",
            "at 1,000,000,000 (no snapshot in the window), then at 6,000 (one snapshot per 4 s at"
                + " the first window's rate)",
            "| snapshots | entries per snapshot | writes/s | p50 ms | p99 ms | p99.9 ms | max ms |"
                + " snapshots written (n1 + n2 + n3) | node CPU µs/write | load s |",
            "| without | 1,000,000,000 | 4,000 | 1.00 | 1.00 | 1.00 | 200.06 | 0 (0 + 0 + 0) |"
                + " 100 | 80.5 |",
            "| with | 6,000 | 3,800 | 1.10 | 1.10 | 1.10 | 300.03 | 5 (2 + 2 + 1) | 111 |"
                + " 82.0 |",
            "With snapshots / without: p99 ×1.10, p99.9 ×1.10, max ×1.50, writes/s ×0.95.");
    assertThat(r.document(null)).contains("### Snapshots under load");
    assertThat(report().tables()).noneMatch(l -> l.contains("Snapshots under load"));
  }

  // Guarantee: --json carries snapshot_load with the keys, the threshold and both windows' figures.
  @Test
  void jsonCarriesBothWindows() {
    BenchReport r = report();
    r.snapshotLoad = figures();
    JsonNode json = r.toJson().path("snapshot_load");
    assertThat(json.path("keys").asInt()).isEqualTo(1_000_000);
    assertThat(json.path("workers").asInt()).isEqualTo(64);
    assertThat(json.path("entries_per_snapshot").asLong()).isEqualTo(6_000);
    assertThat(json.path("entries_per_snapshot_from").asText()).isEqualTo("measured rate");
    JsonNode without = json.path("without");
    JsonNode with = json.path("with");
    assertThat(without.path("entries_per_snapshot").asLong())
        .isEqualTo(SnapshotLoad.FAR_APART_ENTRIES);
    assertThat(without.path("snapshots").asInt()).isZero();
    assertThat(with.path("snapshots").asInt()).isEqualTo(5);
    assertThat(with.path("snapshots_by_node").path("n3").asInt()).isEqualTo(1);
    assertThat(with.path("writes_per_sec").asDouble()).isEqualTo(3_800.0);
    assertThat(with.path("p50_ms").asDouble()).isEqualTo(1.1);
    assertThat(with.path("p99_ms").asDouble()).isEqualTo(1.1);
    assertThat(with.path("p999_ms").asDouble()).isEqualTo(1.1);
    assertThat(with.path("max_ms").asDouble()).isEqualTo(300.031);
    assertThat(with.path("entries_applied").asLong()).isEqualTo(5_800);
    assertThat(with.path("load_seconds").asDouble()).isEqualTo(82.0);
    assertThat(with.path("server_cpu_us_per_write").asDouble()).isEqualTo(110.5);
    assertThat(report().toJson().has("snapshot_load")).isFalse();
  }

  private static BenchReport report() {
    return new BenchReport("./fencekeeper bench", ClusterConfig.local(7301), "test");
  }
}
