package dev.fencekeeper.tools.bench;

import com.sun.tools.attach.VirtualMachine;
import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.ReadConsistency;
import dev.fencekeeper.client.ReadResult;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.config.Limits;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The large-state figures and their targets ("1,000,000 keys of 100 bytes: ≤ 400 MB heap per node,
 * snapshot ≤ 5 s, restart to serving ≤ 10 s"), on a cluster of its own so the other workloads
 * neither disturb nor inherit it: load N keys, then per node the heap in use after a full GC, the
 * time and size of a snapshot, and the time from restarting every node (after kill -9) until the
 * cluster serves a linearizable read and a write again.
 */
final class StateSize {
  static final int VALUE_BYTES = 100;

  /**
   * Keys per resource: well inside limits.keys-per-resource.max, so resources stay of an ordinary
   * size.
   */
  private static final int KEYS_PER_RESOURCE = 1_000;

  private static final int LOADERS = 16;
  private static final Duration SNAPSHOT_TIMEOUT = Duration.ofSeconds(120);
  private static final Duration SERVE_TIMEOUT = Duration.ofSeconds(120);

  /** One node's figures; heap figures are -1 when the node's JVM could not be asked. */
  record Node(
      String id,
      long heapEmptyBytes,
      long heapLoadedBytes,
      long heapRestartedBytes,
      long snapshotMs,
      long snapshotBytes) {}

  /**
   * What one run found. Restart figures count from relaunching the killed nodes; -1: not reached.
   */
  record Figures(
      int keys,
      int resources,
      int keysPerWrite,
      double loadSeconds,
      List<Node> nodes,
      long restartReadMs,
      long restartWriteMs) {
    long maxHeapBytes() {
      return nodes.stream()
          .mapToLong(n -> Math.max(n.heapLoadedBytes, n.heapRestartedBytes))
          .max()
          .orElse(-1);
    }

    long maxSnapshotMs() {
      return nodes.stream().mapToLong(Node::snapshotMs).max().orElse(-1);
    }

    /** Serving means both a linearizable read and a write went through. */
    long restartServingMs() {
      return restartReadMs < 0 || restartWriteMs < 0 ? -1 : Math.max(restartReadMs, restartWriteMs);
    }
  }

  private StateSize() {}

  static Figures measure(int keys, String runId, PrintStream progress)
      throws IOException, InterruptedException {
    progress.println(
        "bench: state: starting a cluster of its own for "
            + keys
            + " keys of "
            + VALUE_BYTES
            + " bytes");
    progress.flush();
    try (BenchCluster cluster = BenchCluster.startLocal(BenchCluster.Kind.FENCEKEEPER)) {
      Limits limits = cluster.config().limits();
      int perResource = keysPerResource(limits);
      int perWrite = keysPerWrite(limits);
      int resources = resources(keys, perResource);
      String prefix = "state/" + runId + "/";
      List<String> ids = cluster.nodeIds();
      Map<String, long[]> heap = new LinkedHashMap<>(); // id -> empty, loaded, restarted
      ids.forEach(id -> heap.put(id, new long[] {-1, -1, -1}));
      Map<String, Long> snapshotMs = new LinkedHashMap<>();
      Map<String, Long> snapshotBytes = new LinkedHashMap<>();
      double loadSeconds;
      awaitListening(cluster, System.nanoTime() + SERVE_TIMEOUT.toNanos());
      try (FencingClient client = FencingClient.connect(cluster.config(), "bench-state")) {
        awaitGrant(client, prefix + "ready", SERVE_TIMEOUT);
        ids.forEach(id -> heap.get(id)[0] = heapAfterFullGc(cluster, id));

        long start = System.nanoTime();
        load(client, prefix, keys, perResource, perWrite);
        loadSeconds = (System.nanoTime() - start) / 1e9;
        progress.printf(
            "bench: state: loaded %d keys into %d resources in %.1f s%n",
            keys, resources, loadSeconds);
        progress.flush();
        ids.forEach(id -> heap.get(id)[1] = heapAfterFullGc(cluster, id));

        try (FencingAdmin admin = FencingAdmin.connect(cluster.config())) {
          for (String id : ids) {
            long t = System.nanoTime();
            admin.snapshot(id, SNAPSHOT_TIMEOUT);
            snapshotMs.put(id, (System.nanoTime() - t) / 1_000_000);
            snapshotBytes.put(id, newestSnapshotBytes(cluster.storageDir(id)));
          }
        }
      }

      for (String id : ids) {
        cluster.kill(id);
      }
      long relaunched = System.nanoTime();
      for (String id : ids) {
        cluster.restart(id);
      }
      // A client connecting before the nodes listen would sit out gRPC's reconnect back-off (1 s,
      // 1.6 s, ...) and count it as restart time; waiting for the ports first keeps that out of the
      // figure.
      awaitListening(cluster, relaunched + SERVE_TIMEOUT.toNanos());
      progress.println(
          "bench: state: every node listens again after "
              + (System.nanoTime() - relaunched) / 1_000_000
              + " ms");
      progress.flush();
      long readMs = -1;
      long writeMs = -1;
      try (FencingClient client = FencingClient.connect(cluster.config(), "bench-state")) {
        String resource = prefix + (resources - 1);
        String key = key(keys - 1 - (long) (resources - 1) * perResource);
        if (awaitRead(client, resource, key, relaunched + SERVE_TIMEOUT.toNanos())) {
          readMs = (System.nanoTime() - relaunched) / 1_000_000;
        }
        if (awaitGrant(client, prefix + "after-restart", relaunched + SERVE_TIMEOUT.toNanos())) {
          writeMs = (System.nanoTime() - relaunched) / 1_000_000;
        }
      }
      progress.println(
          "bench: state: after kill -9 and restart of every node: linearizable read in "
              + readMs
              + " ms, write in "
              + writeMs
              + " ms");
      progress.flush();
      ids.forEach(id -> heap.get(id)[2] = heapAfterFullGc(cluster, id));

      List<Node> nodes = new ArrayList<>();
      for (String id : ids) {
        long[] h = heap.get(id);
        nodes.add(new Node(id, h[0], h[1], h[2], snapshotMs.get(id), snapshotBytes.get(id)));
      }
      return new Figures(keys, resources, perWrite, loadSeconds, nodes, readMs, writeMs);
    }
  }

  /** Keys per resource the load puts in, within the cluster's limits. */
  static int keysPerResource(Limits limits) {
    return Math.min(KEYS_PER_RESOURCE, limits.maxKeysPerResource());
  }

  /** Keys per write of the load: as many values of VALUE_BYTES as one entry may carry. */
  static int keysPerWrite(Limits limits) {
    return Math.max(1, Math.min(limits.maxKeysPerWrite(), limits.maxValueBytes() / VALUE_BYTES));
  }

  static int resources(int keys, int perResource) {
    return (keys + perResource - 1) / perResource;
  }

  /**
   * Fills the resources in parallel: each loader holds one resource at a time and writes its keys
   * in batches.
   */
  static void load(FencingClient client, String prefix, int keys, int perResource, int perWrite)
      throws InterruptedException {
    int resources = resources(keys, perResource);
    AtomicInteger next = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(LOADERS);
    try {
      List<Future<?>> loaders = new ArrayList<>();
      for (int i = 0; i < LOADERS; i++) {
        loaders.add(
            pool.submit(
                () -> {
                  byte[] random = new byte[VALUE_BYTES * perWrite];
                  for (int r = next.getAndIncrement(); r < resources; r = next.getAndIncrement()) {
                    String resource = prefix + r;
                    long token = Workload.acquireOrThrow(client, resource, Duration.ofMinutes(5));
                    int first = r * perResource;
                    int last = Math.min(keys, first + perResource);
                    for (int k = first; k < last; k += perWrite) {
                      ThreadLocalRandom.current().nextBytes(random);
                      List<KeyChange> changes = new ArrayList<>(perWrite);
                      for (int j = k; j < Math.min(last, k + perWrite); j++) {
                        int offset = (j - k) * VALUE_BYTES;
                        changes.add(
                            KeyChange.put(
                                key(j - first),
                                Arrays.copyOfRange(random, offset, offset + VALUE_BYTES)));
                      }
                      WriteResult w = client.write(resource, token, changes, null);
                      if (!w.isAccepted()) {
                        throw new IllegalStateException(
                            "state load: write to " + resource + " was " + w.code() + ": " + w);
                      }
                    }
                    client.release(resource, token);
                  }
                  return null;
                }));
      }
      for (Future<?> f : loaders) {
        try {
          f.get();
        } catch (ExecutionException e) {
          throw new IllegalStateException(
              "state load failed: " + e.getCause().getMessage(), e.getCause());
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  static String key(long i) {
    return String.format("key-%06d", i);
  }

  static void awaitListening(BenchCluster cluster, long deadlineNanos) throws InterruptedException {
    for (var peer : cluster.config().peers()) {
      while (System.nanoTime() < deadlineNanos) {
        try (java.net.Socket probe = new java.net.Socket()) {
          probe.connect(new java.net.InetSocketAddress(peer.host(), peer.port()), 200);
          break;
        } catch (IOException e) {
          Thread.sleep(20);
        }
      }
    }
  }

  private static boolean awaitRead(
      FencingClient client, String resource, String key, long deadlineNanos)
      throws InterruptedException {
    while (System.nanoTime() < deadlineNanos) {
      try {
        ReadResult r = client.read(resource, key, ReadConsistency.LINEARIZABLE);
        if (r.isFound() && r.value().length == VALUE_BYTES) {
          return true;
        }
      } catch (RuntimeException e) {
        // not serving yet
      }
      Thread.sleep(20);
    }
    return false;
  }

  static void awaitGrant(FencingClient client, String resource, Duration timeout)
      throws InterruptedException {
    if (!awaitGrant(client, resource, System.nanoTime() + timeout.toNanos())) {
      throw new IllegalStateException(
          "the state cluster did not grant a lease within " + timeout.toSeconds() + " s");
    }
  }

  private static boolean awaitGrant(FencingClient client, String resource, long deadlineNanos)
      throws InterruptedException {
    while (System.nanoTime() < deadlineNanos) {
      try {
        Result r = client.acquireToken(resource, Duration.ofSeconds(5), "bench-state");
        if (r.code() == ResultCode.GRANTED) {
          client.release(resource, r.token());
          return true;
        }
      } catch (RuntimeException e) {
        // not serving yet
      }
      Thread.sleep(20);
    }
    return false;
  }

  /**
   * Heap in use in node {@code id}'s JVM right after a full GC, asked through the JDK's attach API
   * and the node's platform MemoryMXBean; -1 if the JVM cannot be attached to (not a HotSpot JDK,
   * attach disabled).
   */
  static long heapAfterFullGc(BenchCluster cluster, String id) {
    Optional<Long> pid = cluster.pid(id);
    if (pid.isEmpty()) {
      return -1;
    }
    try {
      VirtualMachine vm = VirtualMachine.attach(Long.toString(pid.get()));
      try {
        String address = vm.startLocalManagementAgent();
        try (JMXConnector jmx = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
          MemoryMXBean memory =
              ManagementFactory.newPlatformMXBeanProxy(
                  jmx.getMBeanServerConnection(),
                  ManagementFactory.MEMORY_MXBEAN_NAME,
                  MemoryMXBean.class);
          memory.gc(); // System.gc(): a full collection with every collector the nodes run
          return memory.getHeapMemoryUsage().getUsed();
        }
      } finally {
        vm.detach();
      }
    } catch (Exception e) {
      return -1;
    }
  }

  /**
   * Size of the newest snapshot file under a node's storage dir (Ratis keeps them in {@code
   * <group>/sm/}).
   */
  private static long newestSnapshotBytes(Path storageDir) throws IOException {
    try (Stream<Path> files = Files.walk(storageDir)) {
      return files
          .filter(
              p ->
                  p.getFileName().toString().startsWith("snapshot.")
                      && !p.getFileName().toString().endsWith(".md5")
                      && !p.getFileName().toString().endsWith(".writing"))
          .max(Comparator.comparingLong(p -> p.toFile().lastModified()))
          .map(p -> p.toFile().length())
          .orElse(-1L);
    }
  }
}
