package dev.fencekeeper.tools.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.PropertyNames;
import dev.fencekeeper.tools.Json;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * W2 while the nodes take snapshots (--snapshot-load): whether a snapshot stalls the apply path,
 * seen as the writes' tail latency. Two clusters of their own, one after the other, each loaded
 * with the same N keys of 100 bytes and then running W2 for the window: the first with snapshots so
 * far apart that none falls in the window, the second with Ratis taking one itself every {@code
 * snapshot.auto-trigger.entries} entries, a count that makes one every few seconds at the first
 * cluster's rate (or --snapshot-every). Fresh clusters with the same history, so the only
 * difference between the two windows is the snapshots.
 */
final class SnapshotLoad {
  /** Keys loaded when --snapshot-load is given without --state-keys. */
  static final int DEFAULT_KEYS = 1_000_000;

  /** Without --snapshot-every, one snapshot per this much of the first window's entries. */
  static final Duration SNAPSHOT_INTERVAL = Duration.ofSeconds(4);

  /** The first cluster's threshold: no snapshot falls within a window of any sensible length. */
  static final long FAR_APART_ENTRIES = 1_000_000_000L;

  private static final String AUTO_TRIGGER_KEY = PropertyNames.SNAPSHOT_AUTO_TRIGGER_ENTRIES;
  private static final Duration POLL_EVERY = Duration.ofMillis(100);
  private static final Duration SERVE_TIMEOUT = Duration.ofSeconds(120);

  /** Ratis's name for a finished snapshot file: {@code snapshot.<term>_<index>}. */
  private static final Pattern SNAPSHOT_FILE = Pattern.compile("snapshot\\.(\\d+)_(\\d+)");

  /**
   * One cluster's window: its threshold, the load before it, the entries the window applied, W2's
   * figures, and per node the snapshots of a state inside the window the node wrote.
   */
  record Run(
      long entriesPerSnapshot,
      double loadSeconds,
      long entriesApplied,
      Measurement w2,
      Map<String, Integer> snapshotsByNode) {
    int snapshots() {
      return snapshotsByNode.values().stream().mapToInt(Integer::intValue).sum();
    }

    double entriesPerSecond() {
      return entriesApplied < 0 ? Double.NaN : entriesApplied / w2.seconds();
    }
  }

  /** Both windows; {@code entriesGiven}: the second threshold came from --snapshot-every. */
  record Figures(
      int keys,
      int resources,
      int keysPerWrite,
      int workers,
      boolean entriesGiven,
      Run without,
      Run with) {}

  private SnapshotLoad() {}

  /**
   * Checks the flags before any cluster starts.
   *
   * @param enabled --snapshot-load
   * @param snapshotEvery --snapshot-every, null when not given
   * @param external whether the bench measures a cluster it did not start (--endpoints)
   * @throws ConfigException one line naming the flag
   */
  static void validate(boolean enabled, Long snapshotEvery, boolean external) {
    if (snapshotEvery != null && (!enabled || snapshotEvery < 1)) {
      throw new ConfigException(
          "--snapshot-every: '" + snapshotEvery + "' must be ≥ 1, and needs --snapshot-load");
    }
    if (enabled && external) {
      throw new ConfigException(
          "--snapshot-load needs clusters the bench starts (not --endpoints): it sets their"
              + " snapshot.auto-trigger.entries");
    }
  }

  /** The second window's threshold: one snapshot per SNAPSHOT_INTERVAL at the given entry rate. */
  static long entriesPerSnapshot(double entriesPerSecond) {
    if (Double.isNaN(entriesPerSecond) || entriesPerSecond <= 0) {
      throw new IllegalStateException(
          "the window without snapshots applied no entries to size the snapshot interval by;"
              + " give --snapshot-every");
    }
    return Math.max(1, Math.round(entriesPerSecond * SNAPSHOT_INTERVAL.toMillis() / 1000.0));
  }

  static Figures measure(
      int keys,
      int workers,
      Long snapshotEvery,
      Duration warmup,
      Duration duration,
      String runId,
      PrintStream progress)
      throws IOException, InterruptedException {
    Limits limits = ClusterConfig.localDefaults().limits();
    int perResource = StateSize.keysPerResource(limits);
    Run without =
        run(keys, workers, FAR_APART_ENTRIES, warmup, duration, runId + "-nosnap", progress);
    long every =
        snapshotEvery != null ? snapshotEvery : entriesPerSnapshot(without.entriesPerSecond());
    Run with = run(keys, workers, every, warmup, duration, runId + "-snap", progress);
    return new Figures(
        keys,
        StateSize.resources(keys, perResource),
        StateSize.keysPerWrite(limits),
        workers,
        snapshotEvery != null,
        without,
        with);
  }

  private static Run run(
      int keys,
      int workers,
      long entriesPerSnapshot,
      Duration warmup,
      Duration duration,
      String runId,
      PrintStream progress)
      throws IOException, InterruptedException {
    progress.printf(
        java.util.Locale.ROOT,
        "bench: snapshot load: a cluster of its own with %s=%d, loading %,d keys%n",
        AUTO_TRIGGER_KEY,
        entriesPerSnapshot,
        keys);
    progress.flush();
    try (BenchCluster cluster =
        BenchCluster.startLocal(
            BenchCluster.Kind.FENCEKEEPER,
            Map.of(AUTO_TRIGGER_KEY, Long.toString(entriesPerSnapshot)))) {
      StateSize.awaitListening(cluster, System.nanoTime() + SERVE_TIMEOUT.toNanos());
      try (FencingClient client = FencingClient.connect(cluster.config(), "bench-snapshots")) {
        String prefix = "state/" + runId + "/";
        StateSize.awaitGrant(client, prefix + "ready", SERVE_TIMEOUT);
        Limits limits = cluster.config().limits();
        long start = System.nanoTime();
        StateSize.load(
            client,
            prefix,
            keys,
            StateSize.keysPerResource(limits),
            StateSize.keysPerWrite(limits));
        double loadSeconds = (System.nanoTime() - start) / 1e9;
        Runner.Probe probe =
            new Runner.Probe() {
              @Override
              public List<Long> serverPids() {
                return cluster.serverPids(client);
              }

              @Override
              public long term() {
                return cluster.term(client);
              }
            };
        Duration leaseTtl = warmup.plus(duration).plusSeconds(60);
        if (!warmup.isZero()) {
          Runner.run(
              "warm-up",
              Workload.W2,
              workers,
              1,
              () -> workers(client, runId + "-warmup", workers, leaseTtl),
              Duration.ZERO,
              warmup,
              probe);
        }
        Measurement w2;
        long applied0;
        long applied1;
        try (SnapshotWatch watch = new SnapshotWatch(cluster)) {
          applied0 = cluster.appliedIndex(client);
          w2 =
              Runner.run(
                  BenchReport.FENCEKEEPER,
                  Workload.W2,
                  workers,
                  1,
                  () -> workers(client, runId, workers, leaseTtl),
                  Duration.ZERO,
                  duration,
                  probe);
          applied1 = cluster.appliedIndex(client);
          Map<String, Integer> snapshots = watch.between(applied0, applied1);
          Run run =
              new Run(
                  entriesPerSnapshot,
                  loadSeconds,
                  applied0 < 0 || applied1 < 0 ? -1 : applied1 - applied0,
                  w2,
                  snapshots);
          progress.printf(
              java.util.Locale.ROOT,
              "bench: snapshot load: loaded in %.1f s; W2 x%d: %.0f writes/s, p99 %.2f ms, max"
                  + " %.2f ms, %d snapshot(s) written by the nodes in the window%n",
              loadSeconds,
              workers,
              w2.opsPerSecond(),
              w2.percentileMs(99),
              w2.maxMs(),
              run.snapshots());
          progress.flush();
          return run;
        }
      }
    }
  }

  private static List<Worker> workers(
      FencingClient client, String runId, int workers, Duration leaseTtl) {
    List<Worker> list = new ArrayList<>();
    for (int i = 0; i < workers; i++) {
      list.add(Workload.W2.worker(client, runId, i, workers, 1, leaseTtl));
    }
    return list;
  }

  /**
   * The log index of a finished snapshot file's name ({@code snapshot.<term>_<index>}), or -1 for
   * any other file (a snapshot still being written, its MD5 file).
   */
  static long snapshotIndex(String fileName) {
    Matcher m = SNAPSHOT_FILE.matcher(fileName);
    return m.matches() ? Long.parseLong(m.group(2)) : -1;
  }

  /** The indices of the finished snapshot files under a node's storage dir now. */
  static Set<Long> snapshotIndices(Path storageDir) {
    Set<Long> indices = new TreeSet<>();
    try (Stream<Path> files = Files.walk(storageDir)) {
      files
          .map(p -> snapshotIndex(p.getFileName().toString()))
          .filter(i -> i >= 0)
          .forEach(indices::add);
    } catch (NoSuchFileException | UncheckedIOException e) {
      // a snapshot file removed by retention while walking: the next poll sees the rest
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return indices;
  }

  /**
   * Per node, in the map's order, how many of its snapshot indices lie after {@code from} and up to
   * {@code to}: the snapshots of a state the window reached, not those from before it.
   */
  static Map<String, Integer> countBetween(
      Map<String, Set<Long>> indicesByNode, long from, long to) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    indicesByNode.forEach(
        (id, indices) ->
            counts.put(id, (int) indices.stream().filter(i -> i > from && i <= to).count()));
    return counts;
  }

  /**
   * Watches every node's snapshot files while open: Ratis keeps only the newest two, so the files
   * are listed every POLL_EVERY and every index ever seen is remembered.
   */
  private static final class SnapshotWatch implements AutoCloseable {
    private final BenchCluster cluster;
    private final Map<String, Set<Long>> seen = new ConcurrentHashMap<>();
    private final Thread poller;
    private volatile boolean open = true;

    SnapshotWatch(BenchCluster cluster) {
      this.cluster = cluster;
      cluster.nodeIds().forEach(id -> seen.put(id, ConcurrentHashMap.newKeySet()));
      poll();
      poller =
          new Thread(
              () -> {
                while (open) {
                  poll();
                  Runner.sleepUntil(System.nanoTime() + POLL_EVERY.toNanos());
                }
              },
              "bench-snapshot-watch");
      poller.setDaemon(true);
      poller.start();
    }

    private void poll() {
      seen.forEach((id, indices) -> indices.addAll(snapshotIndices(cluster.storageDir(id))));
    }

    /** Per node, the snapshots seen of a state after entry {@code from} up to {@code to}. */
    Map<String, Integer> between(long from, long to) {
      poll();
      Map<String, Set<Long>> byNode = new LinkedHashMap<>();
      cluster.nodeIds().forEach(id -> byNode.put(id, seen.get(id)));
      return countBetween(byNode, from, to);
    }

    @Override
    public void close() {
      open = false;
      try {
        poller.join();
      } catch (InterruptedException e) {
        // The poller is a daemon that stops at its next poll; the caller's interrupt stays set.
        Thread.currentThread().interrupt();
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Report

  static ObjectNode toJson(Figures f) {
    ObjectNode o = Json.object();
    o.put("keys", f.keys());
    o.put("value_bytes", StateSize.VALUE_BYTES);
    o.put("resources", f.resources());
    o.put("keys_per_write", f.keysPerWrite());
    o.put("workers", f.workers());
    o.put("entries_per_snapshot", f.with().entriesPerSnapshot());
    o.put("entries_per_snapshot_from", f.entriesGiven() ? "--snapshot-every" : "measured rate");
    o.set("without", runJson(f.without()));
    o.set("with", runJson(f.with()));
    return o;
  }

  private static ObjectNode runJson(Run r) {
    Measurement m = r.w2();
    ObjectNode o = Json.object();
    o.put("entries_per_snapshot", r.entriesPerSnapshot());
    o.put("load_seconds", BenchReport.round(r.loadSeconds(), 2));
    o.put("writes", m.ops());
    o.put("failed", m.failed());
    o.put("writes_per_sec", BenchReport.round(m.opsPerSecond(), 1));
    o.put("p50_ms", BenchReport.round(m.percentileMs(50), 3));
    o.put("p99_ms", BenchReport.round(m.percentileMs(99), 3));
    o.put("p999_ms", BenchReport.round(m.percentileMs(99.9), 3));
    o.put("max_ms", BenchReport.round(m.maxMs(), 3));
    o.put("server_cpu_us_per_write", BenchReport.round(m.cpuMicrosPerOp(m.serverCpuMs()), 1));
    o.put("entries_applied", r.entriesApplied());
    o.put("snapshots", r.snapshots());
    ObjectNode byNode = o.putObject("snapshots_by_node");
    r.snapshotsByNode().forEach(byNode::put);
    return o;
  }

  /**
   * The figures of the Markdown section, as its template (snapshot-load.md.mustache) shows them.
   */
  static Map<String, Object> markdown(Figures f) {
    Measurement a = f.without().w2();
    Measurement b = f.with().w2();
    return ReportTemplate.model(
        "workers", f.workers(),
        "keys", BenchReport.fmt(f.keys(), 0),
        "valueBytes", StateSize.VALUE_BYTES,
        "resources", BenchReport.fmt(f.resources(), 0),
        "keysPerWrite", f.keysPerWrite(),
        "autoTriggerKey", AUTO_TRIGGER_KEY,
        "withoutEntries", BenchReport.fmt(f.without().entriesPerSnapshot(), 0),
        "withEntries", BenchReport.fmt(f.with().entriesPerSnapshot(), 0),
        "entriesGiven", f.entriesGiven(),
        "intervalSeconds", SNAPSHOT_INTERVAL.toSeconds(),
        "nodes", String.join(" + ", f.with().snapshotsByNode().keySet()),
        "windows", List.of(window("without", f.without()), window("with", f.with())),
        "p99Ratio", BenchReport.fmt(b.percentileMs(99) / a.percentileMs(99), 2),
        "p999Ratio", BenchReport.fmt(b.percentileMs(99.9) / a.percentileMs(99.9), 2),
        "maxRatio", BenchReport.fmt(b.maxMs() / a.maxMs(), 2),
        "writesRatio", BenchReport.fmt(b.opsPerSecond() / a.opsPerSecond(), 2),
        "failed", a.failed() + b.failed() > 0,
        "withoutFailed", a.failed(),
        "withFailed", b.failed());
  }

  private static Map<String, Object> window(String label, Run r) {
    Measurement m = r.w2();
    return ReportTemplate.model(
        "label", label,
        "entriesPerSnapshot", BenchReport.fmt(r.entriesPerSnapshot(), 0),
        "writesPerSecond", BenchReport.fmt(m.opsPerSecond(), 0),
        "p50", BenchReport.fmt(m.percentileMs(50), 2),
        "p99", BenchReport.fmt(m.percentileMs(99), 2),
        "p999", BenchReport.fmt(m.percentileMs(99.9), 2),
        "max", BenchReport.fmt(m.maxMs(), 2),
        "snapshots", r.snapshots(),
        "snapshotsByNode",
            r.snapshotsByNode().values().stream()
                .map(String::valueOf)
                .reduce((x, y) -> x + " + " + y)
                .orElse(""),
        "cpu", BenchReport.fmt(m.cpuMicrosPerOp(m.serverCpuMs()), 0),
        "loadSeconds", BenchReport.fmt(r.loadSeconds(), 1));
  }
}
