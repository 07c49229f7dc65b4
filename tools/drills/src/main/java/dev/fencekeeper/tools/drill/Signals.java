package dev.fencekeeper.tools.drill;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * SIGSTOP and SIGCONT, which {@link Process} cannot send, through the shell's kill builtin (no
 * procps needed).
 */
final class Signals {
  private Signals() {}

  static void send(String signal, long pid) {
    try {
      Process kill =
          new ProcessBuilder("/bin/sh", "-c", "kill -" + signal + " " + pid).inheritIO().start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new DrillException("kill -" + signal + " " + pid + " failed");
      }
    } catch (IOException e) {
      throw new DrillException("cannot run kill -" + signal + " " + pid + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DrillException("interrupted while sending SIG" + signal);
    }
  }

  static void sendQuietly(String signal, long pid) {
    try {
      send(signal, pid);
    } catch (RuntimeException e) {
      // Cleaning up: the process may be gone already.
    }
  }
}
