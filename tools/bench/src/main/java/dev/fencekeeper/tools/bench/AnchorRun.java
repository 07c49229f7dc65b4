package dev.fencekeeper.tools.bench;

import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.tools.bench.Failover.LeaderKill;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The anchors of one bench run, started next to fencekeeper's cluster so that each anchor
 * measurement runs right after the fencekeeper measurement it is compared with, like the bare-Ratis
 * baseline's.
 */
final class AnchorRun implements AutoCloseable {
  /** Every name {@code --baseline} takes: the bare-Ratis counter and the anchors. */
  static final String RATIS = "ratis";

  /** How the bench warms up a cluster's JVMs before the first measurement (its --jit-warmup). */
  interface WarmUp {
    void run(
        String system,
        java.util.function.IntFunction<List<Worker>> roundWorkers,
        Runner.Probe probe)
        throws InterruptedException;
  }

  private final List<Anchor> anchors = new ArrayList<>();
  private final int clients;

  private AnchorRun(int clients) {
    this.clients = clients;
  }

  /**
   * The names in {@code --baseline}, checked before anything starts: each must be known, and each
   * anchor's package installed.
   */
  static List<String> parse(String baseline) {
    List<String> names = new ArrayList<>();
    for (String part : baseline.split(",", -1)) {
      String name = part.trim();
      if (!name.equals(RATIS) && Anchor.Kind.named(name).isEmpty()) {
        throw new ConfigException(
            "--baseline: '"
                + name
                + "' is not known; choose from "
                + RATIS
                + ", "
                + String.join(", ", BenchReport.ANCHORS)
                + " (comma-separated)");
      }
      if (!names.contains(name)) {
        names.add(name);
      }
    }
    for (String name : names) {
      Anchor.Kind.named(name).ifPresent(Anchor.Kind::requireInstalled);
    }
    return names;
  }

  /**
   * Starts the anchors named in {@code names} (none: an empty run), cold: {@link #warmUp} warms
   * them up.
   */
  static AnchorRun start(List<String> names, int clients, PrintStream progress)
      throws IOException, InterruptedException {
    AnchorRun run = new AnchorRun(clients);
    try {
      for (String name : names) {
        var kind = Anchor.Kind.named(name);
        if (kind.isEmpty()) {
          continue;
        }
        progress.println(
            "bench: starting a three-member " + kind.get().title + " cluster on 127.0.0.1");
        progress.flush();
        run.anchors.add(kind.get().start(clients));
      }
    } catch (IOException | InterruptedException | RuntimeException e) {
      run.close();
      throw e;
    }
    return run;
  }

  /** Warms up every anchor's JVMs (or processes) as the bench warms up its own cluster's. */
  void warmUp(Duration leaseTtl, WarmUp warmUp) throws InterruptedException {
    for (Anchor anchor : anchors) {
      warmUp.run(
          anchor.system(),
          round -> {
            List<Worker> workers = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
              workers.add(anchor.worker(Workload.W2, "jit" + round, i, 64, leaseTtl));
            }
            return workers;
          },
          anchor.probe());
    }
  }

  /** Each anchor's member processes, by system. */
  java.util.Map<String, java.util.function.Supplier<List<Long>>> members() {
    java.util.Map<String, java.util.function.Supplier<List<Long>>> out = new LinkedHashMap<>();
    for (Anchor anchor : anchors) {
      out.put(anchor.system(), anchor::serverPids);
    }
    return out;
  }

  boolean isEmpty() {
    return anchors.isEmpty();
  }

  /**
   * Each anchor that has an equivalent of {@code w}, measured at {@code concurrency} workers after
   * the warm-up {@code warmup} gives for its system, paced as {@code pacing} gives for it.
   */
  List<Measurement> measure(
      Workload w,
      int concurrency,
      String runId,
      Duration leaseTtl,
      java.util.function.Function<String, Duration> warmup,
      Duration duration,
      java.util.function.Function<String, Runner.Pacing> pacing)
      throws InterruptedException {
    List<Measurement> out = new ArrayList<>();
    for (Anchor anchor : anchors) {
      if (!anchor.covers(w)) {
        continue;
      }
      out.add(
          Runner.run(
              anchor.system(),
              w,
              concurrency,
              clients,
              () -> {
                List<Worker> workers = new ArrayList<>();
                for (int i = 0; i < concurrency; i++) {
                  workers.add(anchor.worker(w, runId, i, concurrency, leaseTtl));
                }
                return workers;
              },
              warmup.apply(anchor.system()),
              duration,
              anchor.probe(),
              pacing.apply(anchor.system())));
    }
    return out;
  }

  /**
   * The hand-off on each anchor with a blocking lock, at {@code waiters} waiters for one resource.
   */
  List<HandOff.Figures> handOffs(
      int waiters,
      String runId,
      java.util.function.Function<String, Duration> warmup,
      Duration duration)
      throws InterruptedException {
    List<HandOff.Figures> out = new ArrayList<>();
    for (Anchor anchor : anchors) {
      if (anchor.covers(Workload.W6)) {
        out.add(
            HandOff.measure(
                anchor.system(),
                waiters,
                i -> anchor.contender(runId, waiters),
                warmup.apply(anchor.system()),
                duration));
      }
    }
    return out;
  }

  /** Leader kills on every anchor, by system. */
  Map<String, List<LeaderKill>> leaderKills(String runId, int trials, PrintStream progress)
      throws Exception {
    Map<String, List<LeaderKill>> out = new LinkedHashMap<>();
    for (Anchor anchor : anchors) {
      out.put(anchor.system(), AnchorFailover.leaderKills(anchor, runId, trials, progress));
    }
    return out;
  }

  @Override
  public void close() {
    anchors.forEach(Anchor::close);
  }
}
