package dev.fencekeeper.tools.drill;

import dev.fencekeeper.tools.ExitCode;

/** The drill could not run as designed (no leader, no namespaces, a worker died): not a verdict. */
public final class DrillException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final ExitCode exitCode;

  public DrillException(String message) {
    this(message, ExitCode.UNAVAILABLE);
  }

  public DrillException(String message, ExitCode exitCode) {
    super(message);
    this.exitCode = exitCode;
  }

  public ExitCode exitCode() {
    return exitCode;
  }
}
