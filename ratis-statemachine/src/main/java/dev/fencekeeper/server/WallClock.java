package dev.fencekeeper.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's wall clock: the system clock plus the configured {@code clock.offset}, and, for the
 * clock-step drill only, a step read from the file named by {@link #STEP_FILE_PROPERTY}
 * (milliseconds, e.g. {@code 30000} or {@code -30000}; missing or empty means 0). The step changes
 * what this clock reads while the node runs, as an operator or a broken NTP setting the system
 * clock would, without touching the node's monotonic clock.
 */
final class WallClock {
  private static final Logger LOG = LoggerFactory.getLogger(WallClock.class);

  /** TEST ONLY: the file a drill writes a wall-clock step into; never set in production. */
  static final String STEP_FILE_PROPERTY = "fencekeeper.testing.clock-step-file";

  private static final long STEP_POLL_MS = 20;

  private WallClock() {}

  static LongSupplier forNode(long offsetMs) {
    String stepFile = System.getProperty(STEP_FILE_PROPERTY);
    if (stepFile == null || stepFile.isBlank()) {
      return () -> System.currentTimeMillis() + offsetMs;
    }
    LOG.warn(
        "TEST ONLY: {}={}: this node's wall clock follows the step written there",
        STEP_FILE_PROPERTY,
        stepFile);
    SteppedClock stepped = new SteppedClock(Path.of(stepFile), offsetMs);
    Thread poller = new Thread(stepped::poll, "fencekeeper-clock-step");
    poller.setDaemon(true);
    poller.start();
    return stepped::nowMs;
  }

  private static final class SteppedClock {
    private final Path file;
    private final long offsetMs;
    private volatile long stepMs;

    SteppedClock(Path file, long offsetMs) {
      this.file = file;
      this.offsetMs = offsetMs;
      this.stepMs = read(0);
    }

    long nowMs() {
      return System.currentTimeMillis() + offsetMs + stepMs;
    }

    void poll() {
      while (true) {
        long step = read(stepMs);
        if (step != stepMs) {
          LOG.warn(
              "TEST ONLY: wall clock stepped by {} ms (now {} ms from the system clock)",
              step - stepMs,
              step);
          stepMs = step;
        }
        try {
          Thread.sleep(STEP_POLL_MS);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    private long read(long previous) {
      try {
        String text = Files.readString(file, StandardCharsets.UTF_8).strip();
        return text.isEmpty() ? 0 : Long.parseLong(text);
      } catch (NoSuchFileException e) {
        return 0;
      } catch (IOException | NumberFormatException e) {
        return previous; // half-written: keep the last step until the file reads whole
      }
    }
  }
}
