package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.tools.drill.history.Op;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The README's seed scenario with real processes: worker A (its own JVM) acquires and writes, is
 * frozen with SIGSTOP past its lease, B acquires and writes, A is resumed with SIGCONT and writes
 * with its old token, which must be rejected. Repeated while the drill lasts, beside the usual
 * workload.
 */
final class StaleWriterDrill implements Drill {
  static final String RESOURCE = "daily-sales-report";
  static final String KEY = "2026-11-29";
  private static final long TTL_MS = 2_000;

  private final List<String> timeline = new ArrayList<>();

  @Override
  public String name() {
    return "stale-writer";
  }

  @Override
  public String summary() {
    return "worker A (own JVM) frozen with SIGSTOP past its lease; B takes over and writes; A"
        + " resumes and writes";
  }

  @Override
  public boolean worksWithExternalCluster() {
    return true;
  }

  /** The T1..T6 lines of every round, as printed in the README's table. */
  List<String> timeline() {
    return List.copyOf(timeline);
  }

  private void line(DrillContext ctx, String text) {
    String stamped = ctx.at(System.nanoTime()) + "  " + text;
    synchronized (timeline) {
      timeline.add(stamped);
    }
    ctx.log.info(text);
  }

  @Override
  public void inject(DrillContext ctx) throws Exception {
    List<PeerAddress> peers = ctx.admin.config().peers();
    Path logFile = ctx.cluster.root().resolve("worker-A.log");
    try (StaleWriterHandle a = new StaleWriterHandle(peers, logFile, ctx.recorder);
        FencingClient bClient = FencingClient.connect(DrillCluster.clientConfig(peers), "B")) {
      RecordedClient b = new RecordedClient(bClient, ctx.recorder, "B");
      int round = 0;
      int completed = 0;
      // At least one completed round, however short the drill: without T6 there is nothing to
      // check. A round skipped because A could not acquire is retried up to three attempts.
      while ((completed == 0 && round < 3) || ctx.roomFor(Duration.ofSeconds(8))) {
        round++;
        if (runRound(ctx, a, b, round)) {
          completed++;
        }
        if (round >= 3 && completed == 0) {
          throw new DrillException(
              "no stale-writer round completed in " + round + " attempts (see the timeline)");
        }
      }
    }
    ctx.untilDeadline();
  }

  /** One T1..T6 round; false when it could not get as far as A's late write. */
  private boolean runRound(DrillContext ctx, StaleWriterHandle a, RecordedClient b, int round)
      throws Exception {
    String resource = RESOURCE + ctx.resourceSuffix;
    line(ctx, "round " + round);
    Op acquired = a.acquire(resource, TTL_MS);
    if (!acquired.ok()) {
      line(ctx, "T1  A acquire " + resource + ": " + acquired.code() + " (round skipped)");
      ctx.sleep(Duration.ofSeconds(1));
      return false;
    }
    long tokenA = acquired.result().token();
    line(ctx, "T1  A acquires " + resource + ", token " + tokenA + " (TTL " + TTL_MS + " ms)");
    Op first = a.write(resource, KEY, tokenA, "A-" + round);
    line(ctx, "T2  A writes with " + tokenA + ": " + first.code());

    Signals.send("STOP", a.pid());
    long pausedAt = System.nanoTime();
    ctx.deadHolders.add(new DrillContext.DeadHolder(resource, tokenA, pausedAt));
    ctx.note("SIGSTOP worker A (pid " + a.pid() + ")");
    line(ctx, "T3  A paused (SIGSTOP); its lease runs out");

    Op granted = null;
    long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < giveUp) {
      Op attempt = b.acquire(resource, Duration.ofSeconds(5));
      if (attempt.ok()) {
        granted = attempt;
        break;
      }
      Thread.sleep(200);
    }
    if (granted == null) {
      Signals.send("CONT", a.pid());
      line(ctx, "T4  B could not acquire " + resource + " within 30 s (round abandoned)");
      return false;
    }
    long tokenB = granted.result().token();
    line(
        ctx,
        String.format(
            "T4  A still paused; B acquires, token %d (%.1f s after the pause)",
            tokenB, (granted.completeNanos() - pausedAt) / 1e9));
    Op bWrite = b.write(resource, KEY, tokenB, "B-" + round);
    line(ctx, "T5  B writes with " + tokenB + ": " + bWrite.code());

    Signals.send("CONT", a.pid());
    ctx.note("SIGCONT worker A");
    Op late = a.write(resource, KEY, tokenA, "A-" + round + "-late");
    String verdict =
        switch (late.outcome()) {
          case FAIL ->
              "rejected, " + (tokenA < tokenB ? tokenA + " < " + tokenB : "") + "; B's value kept";
          case OK -> "a STALE WRITE GOT IN";
          case UNKNOWN -> "no answer (counted as possibly applied)";
        };
    line(
        ctx,
        "T6  A resumes (SIGCONT), writes with " + tokenA + ": " + late.code() + " — " + verdict);
    b.release(resource, tokenB);
    return true;
  }
}
