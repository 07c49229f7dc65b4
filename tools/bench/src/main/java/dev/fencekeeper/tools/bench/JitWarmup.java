package dev.fencekeeper.tools.bench;

import dev.fencekeeper.tools.bench.Runner.Measurement;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;

/**
 * The bench's JIT warm-up: unrecorded load on a freshly started cluster until its compilers settle.
 */
final class JitWarmup {
  private final Duration jitWarmup;
  private final int clients;

  /**
   * @param jitWarmup --jit-warmup: at most this long; zero skips the warm-up
   * @param clients --clients: the clients the warm-up's workers share
   */
  JitWarmup(Duration jitWarmup, int clients) {
    this.jitWarmup = jitWarmup;
    this.clients = clients;
  }

  static final int WORKERS = 64;

  static final int LEASES = 256;
  static final Duration ROUND = Duration.ofSeconds(10);

  /**
   * Below this share of the nodes' CPU the compilers have caught up with the hot paths. Not zero:
   * HotSpot keeps recompiling a little for as long as load changes. 5 % was too early with C2 on
   * two cores: from 4-6 % down to 1 % the nodes' CPU per write still fell by a third
   * (docs/benchmarks.md, JIT).
   */
  private static final double SETTLED_PERCENT = 2;

  /**
   * Load whose figures are thrown away, in rounds, until the node JVMs' JIT compilers settle or
   * --jit-warmup runs out: a freshly started node spends most of its CPU compiling for minutes (JIT
   * was half of the nodes' CPU after 30 s of load), and figures taken then measure the compiler,
   * not the service. Returns what the report says about it, or null when skipped.
   */
  String run(
      PrintStream progress,
      BenchReport safety,
      java.util.function.IntFunction<List<Worker>> roundWorkers,
      Runner.Probe probe)
      throws InterruptedException {
    if (jitWarmup.isZero()) {
      return null;
    }
    progress.println(
        "bench: warming up the node JVMs until their JIT compilers settle (at most "
            + jitWarmup.toSeconds()
            + " s)");
    progress.flush();
    long start = System.nanoTime();
    long deadline = start + jitWarmup.toNanos();
    double jitPercent;
    int rounds = 0;
    while (true) {
      int round = ++rounds;
      Duration length =
          Duration.ofNanos(Math.max(1, Math.min(ROUND.toNanos(), deadline - System.nanoTime())));
      Measurement m =
          Runner.run(
              "warm-up",
              Workload.W2,
              WORKERS,
              clients,
              () -> roundWorkers.apply(round),
              Duration.ZERO,
              length,
              probe);
      jitPercent = m.serverJitPercent();
      if (safety != null) {
        safety.warmupStaleAccepted +=
            m.staleAccepted(); // unrecorded figures, but never unchecked safety
      }
      progress.printf(
          java.util.Locale.ROOT,
          "bench: warm-up round %d: JIT compilers used %.0f %% of the nodes' CPU%n",
          round,
          jitPercent);
      progress.flush();
      if (Double.isNaN(jitPercent)
          || jitPercent < SETTLED_PERCENT
          || System.nanoTime() >= deadline) {
        break;
      }
    }
    long seconds = Math.round((System.nanoTime() - start) / 1e9);
    return String.format(
        java.util.Locale.ROOT,
        "%d s of unrecorded load in %d round(s); in the last one the"
            + " node JVMs' JIT compilers used %.0f %% of their CPU (%s)",
        seconds,
        rounds,
        jitPercent,
        jitPercent < SETTLED_PERCENT
            ? "settled: under " + (int) SETTLED_PERCENT + " %"
            : "not settled within --jit-warmup; early figures include compiling");
  }
}
