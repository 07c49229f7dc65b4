package dev.fencekeeper.client.fakenode;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition a test expects to become true, failing with what was awaited. */
public final class Until {
  private Until() {}

  public static void until(BooleanSupplier condition, Duration atMost, String what) {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("not within " + atMost.toMillis() + " ms: " + what);
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for: " + what, e);
      }
    }
  }
}
