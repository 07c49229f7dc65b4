package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.tools.bench.Runner.Measurement;
import dev.fencekeeper.tools.bench.Runner.Pacing;
import dev.fencekeeper.tools.bench.Workload.Step;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner's accounting of a fixed rate against a closed loop, with a worker whose one slow step
 * stalls it: the figures are about what is counted, not about speed, so the bounds are wide.
 */
class RunnerPacingTest {
  private static final Duration STALL = Duration.ofMillis(400);

  @TempDir Path dir;

  /** One worker whose fifth step takes {@link #STALL}, the others nothing. */
  private static List<Worker> stallingWorker() {
    AtomicInteger steps = new AtomicInteger();
    return List.of(
        () -> {
          if (steps.incrementAndGet() == 5) {
            LockSupport.parkNanos(STALL.toNanos());
          }
          return Step.OK;
        });
  }

  private static final Runner.Probe NO_SERVERS =
      new Runner.Probe() {
        @Override
        public List<Long> serverPids() {
          return List.of();
        }

        @Override
        public long term() {
          return -1;
        }
      };

  private static long atLeast(Histogram h, Duration d) {
    long micros = d.toNanos() / 1000;
    long n = 0;
    for (var v : h.recordedValues()) {
      if (v.getValueIteratedTo() >= micros) {
        n += v.getCountAtValueIteratedTo();
      }
    }
    return n;
  }

  // Guarantee: at a fixed rate, the steps that fell due while a slow step ran are timed from when
  // they were due, so the stall shows in many of them (no coordinated omission), the rate is
  // kept, and the window's HdrHistogram log holds every counted step.
  @Test
  void fixedRateTimesStepsFromWhenTheyWereDue() throws Exception {
    Path log = dir.resolve("logs/w.hlog");
    Measurement m =
        Runner.run(
            "test",
            Workload.W2,
            1,
            1,
            RunnerPacingTest::stallingWorker,
            Duration.ZERO,
            Duration.ofSeconds(2),
            NO_SERVERS,
            new Pacing(100, log));

    // 40 steps fell due during the 400 ms stall; those due in its first half waited ≥ 200 ms.
    assertThat(atLeast(m.micros(), STALL.dividedBy(2))).isGreaterThanOrEqualTo(15);
    assertThat(m.ops()).isBetween(150L, 201L);

    Histogram fromLog = new Histogram(3);
    HistogramLogReader reader = new HistogramLogReader(log.toFile());
    int intervals = 0;
    for (var h = reader.nextIntervalHistogram(); h != null; h = reader.nextIntervalHistogram()) {
      fromLog.add((Histogram) h);
      intervals++;
    }
    assertThat(intervals).isEqualTo(2);
    assertThat(fromLog.getTotalCount()).isEqualTo(m.micros().getTotalCount());
    assertThat(fromLog.getMaxValue()).isEqualTo(m.micros().getMaxValue());
  }

  // Guarantee: in a closed loop the same stall is one slow step: the loop stopped issuing while
  // it waited (what the fixed rate exists to correct).
  @Test
  void closedLoopTimesOnlyTheSlowStep() throws Exception {
    Measurement m =
        Runner.run(
            "test",
            Workload.W2,
            1,
            1,
            RunnerPacingTest::stallingWorker,
            Duration.ZERO,
            Duration.ofSeconds(1),
            NO_SERVERS,
            Pacing.CLOSED);

    assertThat(atLeast(m.micros(), STALL.dividedBy(2))).isEqualTo(1);
  }
}
