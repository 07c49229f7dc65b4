package dev.fencekeeper.benchmarks;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.Outcome;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The pure core's apply path, one log entry per call, as the state machine runs it on every
 * replica: {@code FencingState.apply} then {@code drainEvents}. No Ratis, no encoding: what remains
 * when those are free. A fenced write, a renew, and an acquire + release pair on a fresh request
 * id.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class ApplyBenchmark {
  /**
   * More than limits.request-ids-per-lease.max, so a cycled id has always been forgotten: never a
   * dedup hit.
   */
  private static final int REQUEST_IDS = 4096;

  private final byte[] value = new byte[100];
  private final String[] requestIds = new String[REQUEST_IDS];
  private FencingState state;
  private long index;
  private long stampMs;
  private long heldToken;
  private int nextId;

  @Setup
  public void setUp() {
    for (int i = 0; i < REQUEST_IDS; i++) {
      requestIds[i] = "request-" + i;
    }
    state = new FencingState(Limits.defaults());
    index = 1;
    stampMs = 1_000_000;
    // Other resources the state holds, so lookups are not into an empty map.
    for (int i = 0; i < 10_000; i++) {
      apply(new Command.Acquire("other-" + i, "bench", 3_600_000, "a-" + i, 0, 0));
    }
    heldToken = apply(new Command.Acquire("held", "bench", 3_600_000, "held", 0, 0)).token();
  }

  private Outcome apply(Command command) {
    Outcome o = state.apply(command, 1, index++, stampMs++);
    state.drainEvents();
    return o;
  }

  private String nextRequestId() {
    String id = requestIds[nextId];
    nextId = (nextId + 1) % REQUEST_IDS;
    return id;
  }

  @Benchmark
  public Outcome fencedWrite() {
    return apply(
        new Command.Write(
            "held", heldToken, List.of(Command.KeyWrite.put("k", value)), nextRequestId()));
  }

  @Benchmark
  public Outcome renew() {
    return apply(new Command.Renew("held", heldToken, 3_600_000));
  }

  @Benchmark
  public void acquireAndRelease(Blackhole bh) {
    Outcome granted = apply(new Command.Acquire("churn", "bench", 10_000, nextRequestId(), 0, 0));
    bh.consume(apply(new Command.Release("churn", granted.token())));
  }
}
