package dev.fencekeeper.config;

import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ForkJoinPool;

/**
 * The JVM-wide pool that {@code CompletableFuture} runs its {@code *Async} stages on when given no
 * executor. It uses {@link ForkJoinPool#commonPool()} only when that pool's parallelism is at least
 * 2; below that (the default on a machine with two cores or fewer, where it is {@code
 * availableProcessors - 1}) it starts a new thread for every such stage. Ratis chains one on the
 * path of every log entry (a follower's appendEntries runs its log write through {@code
 * thenComposeAsync}), so a 2-core node started and ended a thread per entry: a third of a node's
 * CPU per write in the W2 benchmark (docs/benchmarks.md).
 */
public final class CommonPool {
  public static final String PARALLELISM_PROPERTY =
      "java.util.concurrent.ForkJoinPool.common.parallelism";
  static final int MIN_PARALLELISM = 2;

  private CommonPool() {}

  /**
   * For fencekeeper's own JVMs, first thing in {@code main} (before anything creates a {@code
   * CompletableFuture}): raises the common pool to two threads where it would be smaller. A
   * parallelism given with {@code -D} is kept.
   */
  public static void atLeastTwoThreads() {
    parallelismToSet(
            System.getProperty(PARALLELISM_PROPERTY), Runtime.getRuntime().availableProcessors())
        .ifPresent(p -> System.setProperty(PARALLELISM_PROPERTY, Integer.toString(p)));
  }

  /** The parallelism to set, or empty to leave the JVM's choice (or the user's) alone. */
  static OptionalInt parallelismToSet(String configured, int processors) {
    if (configured != null || processors - 1 >= MIN_PARALLELISM) {
      return OptionalInt.empty();
    }
    return OptionalInt.of(MIN_PARALLELISM);
  }

  /**
   * Empty when async stages run on the common pool in this JVM; else why that costs and what to do.
   */
  public static Optional<String> threadPerStageWarning() {
    return threadPerStageWarning(ForkJoinPool.getCommonPoolParallelism());
  }

  static Optional<String> threadPerStageWarning(int parallelism) {
    if (parallelism >= MIN_PARALLELISM) {
      return Optional.empty();
    }
    return Optional.of(
        "this JVM's ForkJoinPool common pool has parallelism "
            + parallelism
            + ", so CompletableFuture starts a new thread for every async stage Ratis runs (at"
            + " least one per log entry); start the JVM with -D"
            + PARALLELISM_PROPERTY
            + "="
            + MIN_PARALLELISM);
  }
}
