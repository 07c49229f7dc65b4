package dev.fencekeeper.tools.bench;

import dev.fencekeeper.tools.bench.Workload.Step;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import org.HdrHistogram.Recorder;

/**
 * Runs one workload at one concurrency: a thread per worker, in a closed loop or at a fixed rate
 * ({@link Pacing}), a warm-up whose steps are not counted, then a measured window. In a closed loop
 * only steps that start and end inside the window are timed and counted, so the figures do not
 * depend on how long the last step straddles its end; at a fixed rate, every step due inside it.
 * Safety counters (stale writes accepted) count every step, warm-up included.
 */
final class Runner {
  /** Marks a failure of a worker's prepare (no step was made) among the failures of a run. */
  private static final String PREPARE_FAILURE = "prepare: ";

  private static boolean isPrepareFailure(String reason) {
    return reason.startsWith(PREPARE_FAILURE);
  }

  private static final long HIGHEST_MICROS = TimeUnit.MINUTES.toMicros(5);

  /** The histogram log's interval. */
  private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

  /**
   * How a run paces its workers, and where it logs its latencies.
   *
   * @param perSecond 0: a closed loop, each worker's next step as soon as its last one ends. Above
   *     0: steps a second over all workers, each worker taking an equal share on a fixed schedule
   *     (the workers' schedules staggered), and each step timed from when the schedule wanted it to
   *     start, not from when it did: a step delayed by a slow one before it counts that delay (no
   *     coordinated omission). A worker behind schedule starts its next step at once; the schedule
   *     starts over at the window's start. Steps due in the window but not started by its end are
   *     not timed: below the rate, the percentiles understate.
   * @param histogramLog where to write the window's latencies as an HdrHistogram log, one interval
   *     histogram a second, in microseconds; null: none
   */
  record Pacing(double perSecond, Path histogramLog) {
    /** A closed loop, no log. */
    static final Pacing CLOSED = new Pacing(0, null);

    /** One worker's time between two scheduled steps, or 0 in a closed loop. */
    long intervalNanos(int workers) {
      return perSecond > 0 ? Math.max(1, Math.round(1e9 * workers / perSecond)) : 0;
    }
  }

  private Runner() {}

  /**
   * What one run measured. CPU figures are -1 when a process's CPU could not be read, {@code
   * appliedEntries} when no node told its applied index. {@code api} is the client path a
   * fencekeeper run drove; null for the other systems.
   */
  record Measurement(
      String system,
      Workload workload,
      int concurrency,
      int clients,
      long ops,
      long failed,
      long stepsTotal,
      long staleAccepted,
      double seconds,
      Histogram micros,
      long clientCpuMs,
      long serverCpuMs,
      long serverJitMs,
      long elections,
      Map<String, Long> failures,
      ClientApi api,
      long appliedEntries) {

    /** A measurement of no particular client path, its applied entries unknown. */
    Measurement(
        String system,
        Workload workload,
        int concurrency,
        int clients,
        long ops,
        long failed,
        long stepsTotal,
        long staleAccepted,
        double seconds,
        Histogram micros,
        long clientCpuMs,
        long serverCpuMs,
        long serverJitMs,
        long elections,
        Map<String, Long> failures) {
      this(
          system,
          workload,
          concurrency,
          clients,
          ops,
          failed,
          stepsTotal,
          staleAccepted,
          seconds,
          micros,
          clientCpuMs,
          serverCpuMs,
          serverJitMs,
          elections,
          failures,
          null,
          -1);
    }

    /** This measurement, labelled as taken through {@code path}. */
    Measurement withApi(ClientApi path) {
      return new Measurement(
          system,
          workload,
          concurrency,
          clients,
          ops,
          failed,
          stepsTotal,
          staleAccepted,
          seconds,
          micros,
          clientCpuMs,
          serverCpuMs,
          serverJitMs,
          elections,
          failures,
          path,
          appliedEntries);
    }

    /** Log entries the cluster applied per second of the window, or NaN when unknown. */
    double appliedPerSecond() {
      return appliedEntries < 0 ? Double.NaN : appliedEntries / seconds;
    }

    double opsPerSecond() {
      return ops / seconds;
    }

    double percentileMs(double percentile) {
      return micros.getTotalCount() == 0
          ? Double.NaN
          : micros.getValueAtPercentile(percentile) / 1000.0;
    }

    double maxMs() {
      return micros.getTotalCount() == 0 ? Double.NaN : micros.getMaxValue() / 1000.0;
    }

    /** Steps of the whole run (warm-up included) that did not end OK. */
    long notOkTotal() {
      return failures.entrySet().stream()
          .filter(e -> !isPrepareFailure(e.getKey()))
          .mapToLong(Map.Entry::getValue)
          .sum();
    }

    /**
     * Why steps of the whole run (warm-up included) did not end OK, sorted; prepare failures left
     * out.
     */
    List<String> stepFailureReasons() {
      return failures.keySet().stream()
          .filter(reason -> !isPrepareFailure(reason))
          .sorted()
          .toList();
    }

    /** Share of the servers' CPU their JIT compilers used, in percent, or NaN when unknown. */
    double serverJitPercent() {
      return serverJitMs < 0 || serverCpuMs <= 0 ? Double.NaN : 100.0 * serverJitMs / serverCpuMs;
    }

    /** CPU time per counted step, in microseconds, or NaN when unknown. */
    double cpuMicrosPerOp(long cpuMs) {
      return cpuMs < 0 || ops == 0 ? Double.NaN : cpuMs * 1000.0 / ops;
    }
  }

  /** The cluster-side readings a run takes at its edges. */
  interface Probe {
    List<Long> serverPids();

    /** The highest term any node reports, or -1 if unknown. */
    long term();

    /** The highest last-applied log index any node reports, or -1 if unknown. */
    default long appliedIndex() {
      return -1;
    }
  }

  static Measurement run(
      String system,
      Workload workload,
      int concurrency,
      int clients,
      Supplier<List<Worker>> workerFactory,
      Duration warmup,
      Duration duration,
      Probe probe)
      throws InterruptedException {
    return run(
        system,
        workload,
        concurrency,
        clients,
        workerFactory,
        warmup,
        duration,
        probe,
        Pacing.CLOSED);
  }

  static Measurement run(
      String system,
      Workload workload,
      int concurrency,
      int clients,
      Supplier<List<Worker>> workerFactory,
      Duration warmup,
      Duration duration,
      Probe probe,
      Pacing pacing)
      throws InterruptedException {
    List<Worker> workers = workerFactory.get();
    forEach(workers, Worker::setUp);
    long term0 = probe.term();
    List<Long> pids = probe.serverPids();

    Recorder recorder = new Recorder(HIGHEST_MICROS, 3);
    AtomicLong ops = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicLong stepsTotal = new AtomicLong();
    AtomicLong staleAccepted = new AtomicLong();
    Map<String, LongAdder> failures = new ConcurrentHashMap<>();
    long start = System.nanoTime();
    long measureFrom = start + warmup.toNanos();
    long measureTo = measureFrom + duration.toNanos();
    List<Thread> threads = new ArrayList<>();
    List<Worker> finished = java.util.Collections.synchronizedList(new ArrayList<>());
    long interval = pacing.intervalNanos(workers.size());
    for (int i = 0; i < workers.size(); i++) {
      Worker worker = workers.get(i);
      long offset = interval * i / workers.size();
      Thread t =
          new Thread(
              () -> {
                loop(
                    worker,
                    start,
                    offset,
                    interval,
                    measureFrom,
                    measureTo,
                    recorder,
                    ops,
                    failed,
                    stepsTotal,
                    staleAccepted,
                    failures);
                finished.add(worker);
              },
              "bench-" + workload + "-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    threads.forEach(Thread::start);

    sleepUntil(measureFrom);
    long client0 = CpuMeter.self();
    long servers0 = CpuMeter.cpuMillis(pids);
    long jit0 = CpuMeter.jitMillis(pids);
    long applied0 = probe.appliedIndex();
    Histogram micros = new Histogram(HIGHEST_MICROS, 3);
    HistogramLog log = HistogramLog.open(pacing.histogramLog(), measureFrom);
    Histogram sampled = null;
    for (long mark = measureFrom + LOG_INTERVAL_NANOS;
        mark < measureTo;
        mark += LOG_INTERVAL_NANOS) {
      sleepUntil(mark);
      sampled = recorder.getIntervalHistogram(sampled);
      micros.add(sampled);
      log.write(sampled);
    }
    sleepUntil(measureTo);
    long client1 = CpuMeter.self();
    long servers1 = CpuMeter.cpuMillis(pids);
    long jit1 = CpuMeter.jitMillis(pids);
    long applied1 = probe.appliedIndex();
    long joinDeadline = System.nanoTime() + Workload.CONTENDED_WAIT.plusSeconds(5).toNanos();
    for (Thread t : threads) {
      t.join(Math.max(1, (joinDeadline - System.nanoTime()) / 1_000_000));
    }
    long term1 = probe.term();
    // The last interval after the workers stopped: a step that ended inside the window may
    // record itself just after it.
    sampled = recorder.getIntervalHistogram(sampled);
    micros.add(sampled);
    log.write(sampled);
    log.close();
    // A worker still stuck in a step (a blocked acquire) is left alone; the rest clean up after
    // themselves.
    forEach(new ArrayList<>(finished), Worker::tearDown);

    return new Measurement(
        system,
        workload,
        concurrency,
        clients,
        ops.get(),
        failed.get(),
        stepsTotal.get(),
        staleAccepted.get(),
        duration.toNanos() / 1e9,
        micros,
        client0 < 0 || client1 < 0 ? -1 : client1 - client0,
        servers0 < 0 || servers1 < 0 || pids.isEmpty() ? -1 : servers1 - servers0,
        jit0 < 0 || jit1 < 0 || pids.isEmpty() ? -1 : Math.max(0, jit1 - jit0),
        term0 < 0 || term1 < 0 ? -1 : term1 - term0,
        counts(failures),
        null,
        applied0 < 0 || applied1 < 0 ? -1 : applied1 - applied0);
  }

  /**
   * One worker's steps until the window ends; with {@code interval} above 0 on a schedule from
   * {@code start + offset}, each step timed from when it was due. The schedule starts again at the
   * window's start ({@code measureFrom + offset}) when the warm-up left the worker behind it: a
   * backlog of the warm-up's steps is not the window's.
   */
  private static void loop(
      Worker worker,
      long start,
      long offset,
      long interval,
      long measureFrom,
      long measureTo,
      Recorder recorder,
      AtomicLong ops,
      AtomicLong failed,
      AtomicLong stepsTotal,
      AtomicLong staleAccepted,
      Map<String, LongAdder> failures) {
    long due = start + offset;
    boolean rebased = false;
    while (true) {
      long wait;
      try {
        wait = worker.prepare();
      } catch (RuntimeException e) {
        // Not a failed step (none was made): reported among the failures, not counted as one.
        String reason = String.valueOf(e.getMessage());
        int detail = reason.indexOf(" for ");
        failures
            .computeIfAbsent(
                PREPARE_FAILURE + (detail > 0 ? reason.substring(0, detail) : reason),
                k -> new LongAdder())
            .increment();
        if (System.nanoTime() >= measureTo) {
          return;
        }
        LockSupport.parkNanos(
            TimeUnit.MILLISECONDS.toNanos(10)); // e.g. an acquire during an election
        continue;
      }
      if (wait > 0) {
        sleepUntil(Math.min(System.nanoTime() + wait, measureTo));
      }
      if (interval > 0) {
        if (!rebased && System.nanoTime() >= measureFrom) {
          rebased = true;
          due = Math.max(due, measureFrom + offset);
        }
        sleepUntil(Math.min(due, measureTo));
      }
      long t0 = System.nanoTime();
      if (t0 >= measureTo) {
        return;
      }
      // At a fixed rate the step counts from when it was due: time spent behind schedule is
      // latency a caller at that rate would have seen.
      long from = interval > 0 ? due : t0;
      due += interval;
      Step step;
      try {
        step = worker.step();
      } catch (RuntimeException e) {
        step = Step.failed(e.toString());
      }
      long t1 = System.nanoTime();
      stepsTotal.incrementAndGet();
      if (step.kind() == Step.Kind.STALE_ACCEPTED) {
        staleAccepted.incrementAndGet();
      }
      if (step.kind() != Step.Kind.OK) {
        failures.computeIfAbsent(step.reason(), k -> new LongAdder()).increment();
      }
      // At a fixed rate a step due inside the window counts even when it ends after it: the
      // slowest ones are the ones that straddle its end.
      if (from >= measureFrom && (interval > 0 ? from < measureTo : t1 <= measureTo)) {
        if (step.kind() == Step.Kind.OK) {
          ops.incrementAndGet();
          recorder.recordValue(Math.min(HIGHEST_MICROS, Math.max(1, (t1 - from) / 1000)));
        } else {
          failed.incrementAndGet();
        }
      }
    }
  }

  private static Map<String, Long> counts(Map<String, LongAdder> failures) {
    Map<String, Long> out = new TreeMap<>();
    failures.forEach((reason, n) -> out.put(reason, n.sum()));
    return out;
  }

  /**
   * Runs {@code action} on every worker, 32 at a time; the first failure is rethrown once all are
   * done.
   */
  private static void forEach(List<Worker> workers, java.util.function.Consumer<Worker> action) {
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(32, workers.size())));
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (Worker w : workers) {
        futures.add(pool.submit(() -> action.accept(w)));
      }
      RuntimeException first = null;
      for (Future<?> f : futures) {
        try {
          f.get();
        } catch (java.util.concurrent.ExecutionException e) {
          if (first == null) {
            first =
                e.getCause() instanceof RuntimeException re
                    ? re
                    : new IllegalStateException(e.getCause());
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted", e);
        }
      }
      if (first != null) {
        throw first;
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * A window's HdrHistogram log (readable by HdrHistogram's HistogramLogReader and its plotting
   * tools), or nothing when no file was asked for.
   */
  private static final class HistogramLog {
    private final java.io.PrintStream out;
    private final HistogramLogWriter writer;
    private final long startEpochMs;

    private HistogramLog(java.io.PrintStream out, long startNanos) {
      this.out = out;
      this.startEpochMs = System.currentTimeMillis() - (System.nanoTime() - startNanos) / 1_000_000;
      this.writer = out == null ? null : new HistogramLogWriter(out);
      if (writer != null) {
        writer.outputComment("latencies in microseconds, an interval histogram a second");
        writer.outputLogFormatVersion();
        writer.outputStartTime(startEpochMs);
        writer.setBaseTime(startEpochMs);
        writer.outputLegend();
      }
    }

    static HistogramLog open(Path file, long startNanos) {
      if (file == null) {
        return new HistogramLog(null, startNanos);
      }
      try {
        if (file.getParent() != null) {
          Files.createDirectories(file.getParent());
        }
        return new HistogramLog(
            new java.io.PrintStream(Files.newOutputStream(file), false, StandardCharsets.UTF_8),
            startNanos);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write the histogram log " + file, e);
      }
    }

    /**
     * {@code interval}, the steps recorded since the last write, time-stamped by the recorder; the
     * first one starts at the window's start (nothing is recorded before it).
     */
    void write(Histogram interval) {
      if (writer == null) {
        return;
      }
      interval.setStartTimeStamp(Math.max(startEpochMs, interval.getStartTimeStamp()));
      writer.outputIntervalHistogram(interval);
    }

    void close() {
      if (out != null) {
        out.close();
      }
    }
  }

  static void sleepUntil(long nanoTime) {
    long left;
    while ((left = nanoTime - System.nanoTime()) > 0) {
      LockSupport.parkNanos(left);
    }
  }
}
