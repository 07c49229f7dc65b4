package dev.fencekeeper.tools.drill;

import java.io.PrintStream;

/** Progress lines on stderr, stamped with seconds since the drill began. */
final class DrillLog {
  private final PrintStream err;
  private final long startNanos;
  private final boolean quiet;

  DrillLog(PrintStream err, long startNanos, boolean quiet) {
    this.err = err;
    this.startNanos = startNanos;
    this.quiet = quiet;
  }

  long startNanos() {
    return startNanos;
  }

  String at(long nanos) {
    return String.format("%7.3fs", (nanos - startNanos) / 1e9);
  }

  /** Only with FENCEKEEPER_DRILL_DEBUG set: detail for whoever debugs a drill itself. */
  void debug(String message) {
    if (System.getenv("FENCEKEEPER_DRILL_DEBUG") != null) {
      info(message);
    }
  }

  synchronized void info(String message) {
    if (!quiet) {
      err.println("[" + at(System.nanoTime()) + "] " + message);
      err.flush();
    }
  }
}
