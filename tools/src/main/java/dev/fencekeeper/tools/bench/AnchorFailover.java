package dev.fencekeeper.tools.bench;

import dev.fencekeeper.tools.bench.Failover.LeaderKill;
import dev.fencekeeper.tools.bench.Workload.Step;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The leader-kill figure of {@link Failover}, on an anchor: {@link Failover#WRITERS} W2 workers
 * write in a loop, the leading member is killed -9, and the figures are the first write sent after
 * the kill that is acknowledged and the time until every writer has had a write acknowledged again.
 */
final class AnchorFailover {
  private static final Duration RECOVERY_TIMEOUT = Duration.ofSeconds(30);

  /**
   * After a failed write a writer pauses this long: the ZooKeeper client refuses at once while it
   * reconnects, and sixteen threads retrying without pause would take the two cores the election
   * needs.
   */
  private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private AnchorFailover() {}

  static List<LeaderKill> leaderKills(Anchor anchor, String runId, int trials, PrintStream progress)
      throws Exception {
    List<LeaderKill> results = new ArrayList<>();
    for (int trial = 0; trial < trials; trial++) {
      anchor.awaitAllServing();
      String leader =
          anchor
              .leader()
              .orElseThrow(() -> new IllegalStateException("no " + anchor.system() + " leader"));
      List<Worker> workers = new ArrayList<>();
      for (int w = 0; w < Failover.WRITERS; w++) {
        Worker worker =
            anchor.worker(
                Workload.W2,
                runId + "-failover" + trial,
                w,
                Failover.WRITERS,
                Duration.ofMinutes(2));
        worker.setUp();
        workers.add(worker);
      }
      AtomicLong killNanos = new AtomicLong(Long.MAX_VALUE);
      AtomicLong firstOkAfterKill = new AtomicLong(Long.MAX_VALUE);
      AtomicLongArray writerBackAt = new AtomicLongArray(Failover.WRITERS);
      AtomicLong remaining = new AtomicLong(Failover.WRITERS);
      long stopAt = System.nanoTime() + RECOVERY_TIMEOUT.toNanos() + TimeUnit.SECONDS.toNanos(2);
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < Failover.WRITERS; w++) {
        int index = w;
        Thread t =
            new Thread(
                () -> {
                  while (System.nanoTime() < stopAt && remaining.get() > 0) {
                    long t0 = System.nanoTime();
                    boolean ok;
                    try {
                      ok = workers.get(index).step().kind() == Step.Kind.OK;
                    } catch (RuntimeException e) {
                      ok = false;
                    }
                    long t1 = System.nanoTime();
                    long kill = killNanos.get();
                    if (ok && t1 > kill) {
                      if (t0 > kill) {
                        firstOkAfterKill.accumulateAndGet(t1, Math::min);
                      }
                      if (writerBackAt.compareAndSet(index, 0, t1)) {
                        remaining.decrementAndGet();
                      }
                    }
                    if (!ok) {
                      LockSupport.parkNanos(RETRY_PAUSE_NANOS);
                    }
                  }
                },
                "bench-" + anchor.system() + "-failover-writer-" + w);
        t.setDaemon(true);
        threads.add(t);
      }
      threads.forEach(Thread::start);
      Thread.sleep(1000); // under load before the kill
      killNanos.set(System.nanoTime());
      anchor.kill(leader);
      for (Thread t : threads) {
        t.join(RECOVERY_TIMEOUT.toMillis() + 5000);
      }
      long kill = killNanos.get();
      long first =
          firstOkAfterKill.get() == Long.MAX_VALUE
              ? -1
              : (firstOkAfterKill.get() - kill) / 1_000_000;
      long all = -1;
      if (remaining.get() == 0) {
        long last = 0;
        for (int w = 0; w < Failover.WRITERS; w++) {
          last = Math.max(last, writerBackAt.get(w));
        }
        all = (last - kill) / 1_000_000;
      }
      results.add(new LeaderKill(leader, first, all, -1));
      progress.printf(
          "failover %s %d/%d: killed leader %s; first write sent after the kill acknowledged after"
              + " %d ms, all %d writers back after %d ms%n",
          anchor.system(), trial + 1, trials, leader, first, Failover.WRITERS, all);
      progress.flush();
      anchor.restart(leader);
      for (Worker worker : workers) {
        try {
          worker.tearDown();
        } catch (RuntimeException e) {
          // the session or lease ends anyway
        }
      }
    }
    anchor.awaitAllServing();
    return results;
  }
}
