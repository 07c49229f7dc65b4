package dev.fencekeeper.testing;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * Write latency while snapshots are taken: loads a three-node in-process cluster with {@code keys}
 * keys of 100 bytes, then runs W2 (each writer a fenced write loop on a lease of its own) for
 * {@code seconds}, with {@code snapshot.auto-trigger.entries} set so that Ratis takes a snapshot
 * every few seconds. Prints one line: write count, p50, p99, p99.9 and max in ms, and how many
 * snapshots the leader wrote during the window. A measurement, not a test: run it by hand (see
 * docs/benchmarks.md, "Snapshots under load").
 *
 * <p>Arguments: data dir, keys, auto-trigger entries, seconds, writers.
 */
public final class SnapshotsUnderLoad {
  private static final int VALUE_BYTES = 100;
  private static final int KEYS_PER_RESOURCE = 1_000;
  private static final int LOADERS = 8;

  private SnapshotsUnderLoad() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int keys = Integer.parseInt(args[1]);
    long autoTrigger = Long.parseLong(args[2]);
    int seconds = Integer.parseInt(args[3]);
    int writers = Integer.parseInt(args[4]);
    Properties extra = new Properties();
    extra.setProperty("snapshot.auto-trigger.entries", Long.toString(autoTrigger));
    try (TestCluster cluster = TestCluster.start(dir, extra)) {
      String leader = cluster.awaitLeader();
      FencingClient client = cluster.newClient("measure");
      long loadStart = System.nanoTime();
      var limits = cluster.config().limits();
      load(
          client,
          keys,
          Math.max(1, Math.min(limits.maxKeysPerWrite(), limits.maxValueBytes() / VALUE_BYTES)));
      System.err.printf("loaded %d keys in %.1f s%n", keys, (System.nanoTime() - loadStart) / 1e9);
      leader = cluster.awaitLeader();
      Path smDir = cluster.nodeConfig(leader).storageDir();
      Set<String> snapshots = ConcurrentHashMap.newKeySet();
      Set<String> before = snapshotFiles(smDir);
      long[][] latencies = new long[writers][];
      AtomicInteger failures = new AtomicInteger();
      long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
      ExecutorService pool = Executors.newFixedThreadPool(writers);
      List<Future<long[]>> runs = new ArrayList<>();
      byte[] value = new byte[VALUE_BYTES];
      for (int w = 0; w < writers; w++) {
        String resource = "w2/" + w;
        runs.add(
            pool.submit(
                () -> {
                  Result lease = client.acquireToken(resource, Duration.ofMinutes(10), "w2");
                  long token = lease.token();
                  long[] l = new long[1 << 20];
                  int n = 0;
                  while (System.nanoTime() < end && n < l.length) {
                    long t = System.nanoTime();
                    if (client.write(resource, token, "k", value).code() != ResultCode.ACCEPTED) {
                      failures.incrementAndGet();
                    }
                    l[n++] = System.nanoTime() - t;
                  }
                  return Arrays.copyOf(l, n);
                }));
      }
      while (System.nanoTime() < end) {
        snapshots.addAll(snapshotFiles(smDir));
        Thread.sleep(100);
      }
      for (int w = 0; w < writers; w++) {
        latencies[w] = runs.get(w).get();
      }
      pool.shutdown();
      snapshots.removeAll(before);
      long[] all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).sorted().toArray();
      System.out.printf(
          "writes=%d failures=%d p50=%.1f p99=%.1f p99.9=%.1f max=%.1f ms snapshots=%d%n",
          all.length,
          failures.get(),
          at(all, 0.50),
          at(all, 0.99),
          at(all, 0.999),
          all[all.length - 1] / 1e6,
          snapshots.size());
    }
  }

  private static double at(long[] sorted, double q) {
    return sorted[Math.min(sorted.length - 1, (int) (sorted.length * q))] / 1e6;
  }

  private static Set<String> snapshotFiles(Path storageDir) throws Exception {
    try (Stream<Path> files = Files.walk(storageDir)) {
      return new java.util.HashSet<>(
          files
              .map(p -> p.getFileName().toString())
              .filter(n -> n.matches("snapshot\\.\\d+_\\d+"))
              .toList());
    }
  }

  private static void load(FencingClient client, int keys, int perWrite) throws Exception {
    int resources = (keys + KEYS_PER_RESOURCE - 1) / KEYS_PER_RESOURCE;
    AtomicInteger next = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(LOADERS);
    List<Future<?>> loaders = new ArrayList<>();
    for (int i = 0; i < LOADERS; i++) {
      loaders.add(
          pool.submit(
              () -> {
                byte[] random = new byte[VALUE_BYTES];
                for (int r = next.getAndIncrement(); r < resources; r = next.getAndIncrement()) {
                  String resource = "state/" + r;
                  long token =
                      client.acquireToken(resource, Duration.ofMinutes(10), "load").token();
                  int first = r * KEYS_PER_RESOURCE;
                  int last = Math.min(keys, first + KEYS_PER_RESOURCE);
                  for (int k = first; k < last; k += perWrite) {
                    List<KeyChange> changes = new ArrayList<>(perWrite);
                    for (int j = k; j < Math.min(last, k + perWrite); j++) {
                      ThreadLocalRandom.current().nextBytes(random);
                      changes.add(
                          KeyChange.put(String.format("key-%06d", j - first), random.clone()));
                    }
                    if (!client.write(resource, token, changes, null).isAccepted()) {
                      throw new IllegalStateException("load write to " + resource + " refused");
                    }
                  }
                  client.release(resource, token);
                }
                return null;
              }));
    }
    for (Future<?> f : loaders) {
      f.get();
    }
    pool.shutdown();
  }
}
