package dev.fencekeeper.tools.bench;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.tools.ClassArchive;
import dev.fencekeeper.tools.FencekeeperCli;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * Failover figures against the bench's own cluster:
 *
 * <ul>
 *   <li>leader kill -9 under write load → the first write <em>sent after the kill</em> is
 *       acknowledged, and → every writer has had a write acknowledged again (the slowest writer's
 *       stall);
 *   <li>a holder process killed with -9 → the resource is granted to a blocked waiter.
 * </ul>
 */
final class Failover {
  static final int WRITERS = 16;
  static final Duration HOLDER_TTL = Duration.ofSeconds(1);
  private static final Duration RECOVERY_TIMEOUT = Duration.ofSeconds(30);

  private Failover() {}

  /** One leader kill: -1 for a figure that was not reached within the timeout. */
  record LeaderKill(String killed, long firstWriteMs, long allWritersMs, long elections) {}

  /** One dead holder: its TTL and the time from its kill -9 to the waiter's grant. */
  record DeadHolder(long ttlMs, long regrantMs) {}

  static List<LeaderKill> leaderKills(
      BenchCluster cluster, FencingClient client, String runId, int trials, PrintStream progress)
      throws Exception {
    List<LeaderKill> results = new ArrayList<>();
    for (int trial = 0; trial < trials; trial++) {
      awaitAllServing(cluster, client);
      long term0 = cluster.term(client);
      String leader =
          cluster.leader(client).orElseThrow(() -> new IllegalStateException("no leader"));
      long[] tokens = new long[WRITERS];
      String[] resources = new String[WRITERS];
      for (int w = 0; w < WRITERS; w++) {
        resources[w] = "bench/" + runId + "/failover/" + trial + "/" + w;
        tokens[w] = Workload.acquireOrThrow(client, resources[w], Duration.ofMinutes(2));
      }
      Recovery recovery =
          killUnderLoad(
              "bench-failover-writer-",
              index ->
                  client.write(resources[index], tokens[index], "k", Workload.VALUE).isAccepted(),
              0,
              () -> cluster.kill(leader));
      long first = recovery.firstWriteMs();
      long all = recovery.allWritersMs();
      long term1 = cluster.term(client);
      results.add(new LeaderKill(leader, first, all, term0 < 0 || term1 < 0 ? -1 : term1 - term0));
      progress.printf(
          "failover %d/%d: killed leader %s; first write sent after the kill acknowledged after %d"
              + " ms, all %d writers back after %d ms%n",
          trial + 1, trials, leader, first, WRITERS, all);
      progress.flush();
      cluster.restart(leader);
      for (int w = 0; w < WRITERS; w++) {
        try {
          client.release(resources[w], tokens[w]);
        } catch (RuntimeException e) {
          // the lease expires anyway
        }
      }
    }
    awaitAllServing(cluster, client);
    return results;
  }

  /** What one leader kill measured, in ms from the kill; -1 for a figure not reached. */
  record Recovery(long firstWriteMs, long allWritersMs) {}

  /**
   * {@link #WRITERS} threads write in a loop ({@code write} of their index, true when
   * acknowledged); after a second of load {@code kill} kills the leader. Measures the first write
   * sent after the kill that is acknowledged, and the time until every writer has had a write
   * acknowledged again. A writer whose write fails pauses {@code pauseAfterFailureNanos} (0: none)
   * before the next.
   */
  static Recovery killUnderLoad(
      String threadPrefix,
      java.util.function.IntPredicate write,
      long pauseAfterFailureNanos,
      Runnable kill)
      throws InterruptedException {
    AtomicLong killNanos = new AtomicLong(Long.MAX_VALUE);
    AtomicLong firstOkAfterKill = new AtomicLong(Long.MAX_VALUE);
    AtomicLongArray writerBackAt = new AtomicLongArray(WRITERS);
    AtomicLong remaining = new AtomicLong(WRITERS);
    long stopAt = System.nanoTime() + RECOVERY_TIMEOUT.toNanos() + TimeUnit.SECONDS.toNanos(2);
    List<Thread> writers = new ArrayList<>();
    for (int w = 0; w < WRITERS; w++) {
      int index = w;
      Thread t =
          new Thread(
              () -> {
                while (System.nanoTime() < stopAt && remaining.get() > 0) {
                  long t0 = System.nanoTime();
                  boolean ok;
                  try {
                    ok = write.test(index);
                  } catch (RuntimeException e) {
                    ok = false;
                  }
                  long t1 = System.nanoTime();
                  long killedAt = killNanos.get();
                  if (ok && t1 > killedAt) {
                    if (t0 > killedAt) {
                      firstOkAfterKill.accumulateAndGet(t1, Math::min);
                    }
                    if (writerBackAt.compareAndSet(index, 0, t1)) {
                      remaining.decrementAndGet();
                    }
                  }
                  if (!ok && pauseAfterFailureNanos > 0) {
                    LockSupport.parkNanos(pauseAfterFailureNanos);
                  }
                }
              },
              threadPrefix + w);
      t.setDaemon(true);
      writers.add(t);
    }
    writers.forEach(Thread::start);
    Thread.sleep(1000); // under load before the kill
    killNanos.set(System.nanoTime());
    kill.run();
    for (Thread t : writers) {
      t.join(RECOVERY_TIMEOUT.toMillis() + 5000);
    }
    long killedAt = killNanos.get();
    long first =
        firstOkAfterKill.get() == Long.MAX_VALUE
            ? -1
            : (firstOkAfterKill.get() - killedAt) / 1_000_000;
    long all = -1;
    if (remaining.get() == 0) {
      long last = 0;
      for (int w = 0; w < WRITERS; w++) {
        last = Math.max(last, writerBackAt.get(w));
      }
      all = (last - killedAt) / 1_000_000;
    }
    return new Recovery(first, all);
  }

  static List<DeadHolder> deadHolders(
      BenchCluster cluster, FencingClient client, String runId, int trials, PrintStream progress)
      throws Exception {
    List<DeadHolder> results = new ArrayList<>();
    String endpoints =
        cluster.config().clientAddresses().stream()
            .map(PeerAddress::address)
            .collect(Collectors.joining(","));
    for (int trial = 0; trial < trials; trial++) {
      String resource = "bench/" + runId + "/holder/" + trial;
      Process holder = startHolder(endpoints, resource);
      try {
        CompletableFuture<Lease> waiter =
            client.acquireAsync(resource, Duration.ofSeconds(5), Duration.ofSeconds(30));
        AtomicLong grantedAt = new AtomicLong();
        CompletableFuture<Lease> granted =
            waiter.whenComplete((l, e) -> grantedAt.set(System.nanoTime()));
        Thread.sleep(500); // queued behind the holder, which has renewed at least once
        long kill = System.nanoTime();
        holder.destroyForcibly();
        Lease lease = granted.get(30, TimeUnit.SECONDS);
        long regrant = (grantedAt.get() - kill) / 1_000_000;
        lease.close();
        results.add(new DeadHolder(HOLDER_TTL.toMillis(), regrant));
        progress.printf(
            "dead holder %d/%d: holder (TTL %d ms) killed -9; waiter granted after %d ms%n",
            trial + 1, trials, HOLDER_TTL.toMillis(), regrant);
        progress.flush();
      } finally {
        holder.destroyForcibly();
      }
    }
    return results;
  }

  /** A separate {@code fencekeeper lease hold} process: a holder that renews until it is killed. */
  private static Process startHolder(String endpoints, String resource)
      throws IOException, InterruptedException {
    String java =
        ProcessHandle.current()
            .info()
            .command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> command = new ArrayList<>(List.of(java));
    command.addAll(ClassArchive.childJvmFlags());
    command.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            FencekeeperCli.class.getName(),
            "lease",
            "hold",
            "--endpoints",
            endpoints,
            resource,
            "--ttl",
            HOLDER_TTL.toMillis() + "ms"));
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<String> line =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return out.readLine();
              } catch (IOException e) {
                return null;
              }
            });
    try {
      String first = line.get(30, TimeUnit.SECONDS);
      if (first == null || !first.startsWith("HOLDING")) {
        throw new IllegalStateException(
            "the holder process did not take " + resource + ": " + first);
      }
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      p.destroyForcibly();
      throw new IllegalStateException(
          "the holder process did not take " + resource + " in 30 s", e);
    }
    return p;
  }

  /** Every node answers and one leads; a restarted node has had time to catch up. */
  static void awaitAllServing(BenchCluster cluster, FencingClient client)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      boolean all = true;
      for (PeerAddress peer : cluster.config().peers()) {
        try {
          Wire.nodeInfo(client, peer.id(), Duration.ofSeconds(1));
        } catch (RuntimeException e) {
          all = false;
        }
      }
      Optional<String> leader = cluster.leader(client);
      if (all && leader.isPresent()) {
        Thread.sleep(1000); // let a restarted follower catch up before loading the cluster again
        return;
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(
        "the bench cluster did not have all three nodes serving within 60 s");
  }
}
