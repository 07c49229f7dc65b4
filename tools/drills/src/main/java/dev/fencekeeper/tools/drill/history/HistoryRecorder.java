package dev.fencekeeper.tools.drill.history;

import dev.fencekeeper.tools.drill.history.Op.OpType;
import dev.fencekeeper.tools.drill.history.Op.Outcome;
import dev.fencekeeper.tools.drill.history.Op.Result;
import java.util.ArrayList;
import java.util.List;

/**
 * Collects a history from many threads. Times come from {@link System#nanoTime()} of this JVM, so
 * every invoke and complete is on one monotonic clock; an operation run in another process is
 * recorded here by the thread that told it to run and heard its answer, which only widens its
 * interval.
 */
public final class HistoryRecorder {
  private final List<Op> ops = new ArrayList<>();
  private final List<LeaseEventRecord> events = new ArrayList<>();
  private final List<Integer> finalReads = new ArrayList<>();
  private int nextId = 1;

  /** An operation in flight: complete it exactly once. */
  public final class Pending {
    private final int id;
    private final String process;
    private final OpType type;
    private final String resource;
    private final String key;
    private final long token;
    private final String value;
    private final long invokeNanos;

    private Pending(
        int id,
        String process,
        OpType type,
        String resource,
        String key,
        long token,
        String value,
        long invokeNanos) {
      this.id = id;
      this.process = process;
      this.type = type;
      this.resource = resource;
      this.key = key;
      this.token = token;
      this.value = value;
      this.invokeNanos = invokeNanos;
    }

    public Op complete(Outcome outcome, String code, Result result) {
      long complete = outcome == Outcome.UNKNOWN ? Long.MAX_VALUE : System.nanoTime();
      Op op =
          new Op(
              id,
              process,
              type,
              resource,
              key,
              token,
              value,
              invokeNanos,
              complete,
              outcome,
              code,
              result);
      synchronized (HistoryRecorder.this) {
        ops.add(op);
      }
      return op;
    }

    public long invokeNanos() {
      return invokeNanos;
    }
  }

  public synchronized Pending invoke(
      String process, OpType type, String resource, String key, long token, String value) {
    return new Pending(nextId++, process, type, resource, key, token, value, System.nanoTime());
  }

  public synchronized void event(LeaseEventRecord event) {
    events.add(event);
  }

  public synchronized void markFinalRead(Op read) {
    finalReads.add(read.id());
  }

  public synchronized List<Op> opsSoFar() {
    return List.copyOf(ops);
  }

  public synchronized History history(boolean eventsComplete) {
    List<Op> sorted = new ArrayList<>(ops);
    sorted.sort((a, b) -> Integer.compare(a.id(), b.id()));
    return new History(sorted, events, eventsComplete, finalReads);
  }
}
