package dev.fencekeeper.tools;

/**
 * Runs a cleanup when the JVM is told to stop (SIGTERM, Ctrl-C) and then exits with 0: for a
 * long-running command, being stopped is how it is meant to end, not a failure (the JVM's default
 * would be 143 or 130). {@link #close()} withdraws it, for the paths where the command ends by
 * itself with its own exit code.
 */
final class Termination implements AutoCloseable {
  private final Thread hook;

  private Termination(Runnable cleanup) {
    this.hook =
        new Thread(
            () -> {
              try {
                cleanup.run();
              } finally {
                System.out.flush();
                System.err.flush();
                // exit() would wait for this very hook; halt() ends now, with the status we chose.
                Runtime.getRuntime().halt(ExitCode.SUCCESS.code());
              }
            },
            "fencekeeper-termination");
  }

  static Termination onSignal(Runnable cleanup) {
    Termination t = new Termination(cleanup);
    Runtime.getRuntime().addShutdownHook(t.hook);
    return t;
  }

  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // A signal arrived first: the hook is already running and will end the process itself.
    }
  }
}
