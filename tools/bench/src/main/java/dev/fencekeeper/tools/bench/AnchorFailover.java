package dev.fencekeeper.tools.bench;

import dev.fencekeeper.tools.bench.Failover.LeaderKill;
import dev.fencekeeper.tools.bench.Workload.Step;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The leader-kill figure of {@link Failover}, on an anchor: {@link Failover#WRITERS} W2 workers
 * write in a loop, the leading member is killed -9, and the figures are the first write sent after
 * the kill that is acknowledged and the time until every writer has had a write acknowledged again.
 */
final class AnchorFailover {
  /**
   * After a failed write a writer pauses this long: the ZooKeeper client refuses at once while it
   * reconnects, and sixteen threads retrying without pause would take the two cores the election
   * needs.
   */
  private static final long RETRY_PAUSE_NANOS = Duration.ofMillis(5).toNanos();

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
      Failover.Recovery recovery =
          Failover.killUnderLoad(
              "bench-" + anchor.system() + "-failover-writer-",
              index -> workers.get(index).step().kind() == Step.Kind.OK,
              RETRY_PAUSE_NANOS,
              () -> anchor.kill(leader));
      long first = recovery.firstWriteMs();
      long all = recovery.allWritersMs();
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
