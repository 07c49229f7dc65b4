package dev.fencekeeper.metrics;

import dev.fencekeeper.core.FencingState;
import java.util.function.Function;

/**
 * How the gauges read the replicated state: under the state machine's read lock, without the
 * metrics naming the state machine (which reports to the metrics, so the dependency points from it
 * to here only).
 */
@FunctionalInterface
public interface StateReader {
  /** Runs {@code reader} on the state under the read lock and returns what it returns. */
  <T> T read(Function<FencingState, T> reader);
}
