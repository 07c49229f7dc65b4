package dev.fencekeeper.tools.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code --idle}: what each system's three members cost when nothing happens — no load, the bench's
 * clients connected — as CPU from {@code /proc/<pid>/stat} over one window shared by every system,
 * so they are measured side by side on the same machine at the same time.
 */
final class IdleCpu {
  /**
   * Quiet time before the window, after the clusters came up and answered their first command: the
   * start-up's JIT compilation and GC tail out of the figure.
   */
  static final Duration SETTLE = Duration.ofSeconds(5);

  private IdleCpu() {}

  /**
   * One system's idle figures: its members' CPU and their JIT compilers' share over {@code
   * seconds}; -1 when unreadable.
   */
  record Figures(String system, double seconds, long cpuMs, long jitMs) {
    /** CPU of the three members together, in percent of one core; NaN when unknown. */
    double percentOfCore() {
      return cpuMs < 0 ? Double.NaN : 100.0 * cpuMs / 1000.0 / seconds;
    }
  }

  /**
   * Waits {@link #SETTLE}, then reads every system's members' CPU at both ends of {@code window}.
   *
   * @param members the member processes of each system, in the report's order
   */
  static List<Figures> measure(Map<String, Supplier<List<Long>>> members, Duration window)
      throws InterruptedException {
    Thread.sleep(SETTLE.toMillis());
    Map<String, List<Long>> pids = new LinkedHashMap<>();
    members.forEach((system, p) -> pids.put(system, p.get()));
    Map<String, long[]> start = new LinkedHashMap<>();
    pids.forEach(
        (system, p) ->
            start.put(system, new long[] {CpuMeter.cpuMillis(p), CpuMeter.jitMillis(p)}));
    long t0 = System.nanoTime();
    Thread.sleep(window.toMillis());
    double seconds = (System.nanoTime() - t0) / 1e9;
    List<Figures> out = new ArrayList<>();
    pids.forEach(
        (system, p) -> {
          long[] s = start.get(system);
          long cpu = CpuMeter.cpuMillis(p);
          long jit = CpuMeter.jitMillis(p);
          out.add(
              new Figures(
                  system,
                  seconds,
                  s[0] < 0 || cpu < 0 || p.isEmpty() ? -1 : cpu - s[0],
                  s[1] < 0 || jit < 0 || p.isEmpty() ? -1 : Math.max(0, jit - s[1])));
        });
    return out;
  }
}
