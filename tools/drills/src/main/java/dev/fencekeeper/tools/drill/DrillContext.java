package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.tools.drill.check.Finding;
import dev.fencekeeper.tools.drill.history.HistoryRecorder;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What a fault schedule works with: the cluster, the history, a seeded random, and the drill's
 * clock.
 */
final class DrillContext {
  /** A moment worth a line in the timeline; a disruptive one starts an unavailability window. */
  record Mark(long nanos, String what, boolean disruptive) {}

  /**
   * A holder that stopped renewing (paused or walked away) at {@code atNanos}: the re-grant is
   * timed.
   */
  record DeadHolder(String resource, long token, long atNanos) {}

  final DrillCluster cluster;
  final FencingClient admin;
  final HistoryRecorder recorder;
  final DrillLog log;
  final Random random;
  final long startNanos;

  /**
   * Appended to resource names: empty on the drill's own cluster, unique per run on a shared one.
   */
  final String resourceSuffix;

  final long deadlineNanos;
  final List<Mark> marks = new CopyOnWriteArrayList<>();
  final List<DeadHolder> deadHolders = new CopyOnWriteArrayList<>();

  /** Each leader kill → the first renewal of a renewing holder's lease the new leader answered. */
  final List<DrillResult.Window> renewals = new CopyOnWriteArrayList<>();

  /** Violations a drill checks itself, beside the history checker's; any one fails the drill. */
  final List<Finding> findings = new CopyOnWriteArrayList<>();

  DrillContext(
      DrillCluster cluster,
      FencingClient admin,
      HistoryRecorder recorder,
      DrillLog log,
      long seed,
      long deadlineNanos,
      String resourceSuffix) {
    this.resourceSuffix = resourceSuffix;
    this.cluster = cluster;
    this.admin = admin;
    this.recorder = recorder;
    this.log = log;
    this.random = new Random(seed);
    this.startNanos = System.nanoTime();
    this.deadlineNanos = deadlineNanos;
  }

  /** Seconds since the drill began, as the report prints them. */
  String at(long nanos) {
    return String.format("%7.3fs", (nanos - startNanos) / 1e9);
  }

  void fault(String what) {
    marks.add(new Mark(System.nanoTime(), what, true));
    log.info("FAULT " + what);
  }

  void violation(Finding finding) {
    findings.add(finding);
    log.info("VIOLATION " + finding.summary());
  }

  void note(String what) {
    marks.add(new Mark(System.nanoTime(), what, false));
    log.info(what);
  }

  /** True while another round of {@code round} still ends before the drill's deadline. */
  boolean roomFor(Duration round) {
    return System.nanoTime() + round.toNanos() < deadlineNanos;
  }

  void sleep(Duration d) throws InterruptedException {
    Thread.sleep(d.toMillis());
  }

  /** Sleeps between {@code minMs} and {@code maxMs}, chosen by the seeded random. */
  void sleepBetween(long minMs, long maxMs) throws InterruptedException {
    Thread.sleep(minMs + (long) (random.nextDouble() * (maxMs - minMs)));
  }

  String leader() throws InterruptedException {
    return cluster.awaitLeader(Duration.ofSeconds(60));
  }

  void untilDeadline() throws InterruptedException {
    long left = deadlineNanos - System.nanoTime();
    if (left > 0) {
      Thread.sleep(left / 1_000_000);
    }
  }
}
