package dev.fencekeeper.server.local;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/** One start of a node, in this JVM or as a process of its own. */
sealed interface LaunchedNode {
  boolean isAlive();

  /** Asks the node to stop as an operator would: closes it, or sends SIGTERM. */
  void terminate() throws IOException;

  /** Waits up to {@code timeout} for the node to be gone; true once it is. */
  boolean awaitExit(Duration timeout) throws InterruptedException;

  /** Stops it without its cooperation: SIGKILL for a process. */
  void kill() throws IOException;

  /** The exit code of a process that has ended; 0 for a node in this JVM once closed. */
  OptionalInt exitCode();

  /** A node in this JVM: {@code node} is what started it; closing it stops it. */
  final class InProcess implements LaunchedNode {
    private final AutoCloseable node;
    private volatile boolean closed;

    InProcess(AutoCloseable node) {
      this.node = node;
    }

    AutoCloseable node() {
      return node;
    }

    @Override
    public boolean isAlive() {
      return !closed;
    }

    @Override
    public void terminate() throws IOException {
      if (closed) {
        return;
      }
      // Gone from the cluster's view either way: a node whose close failed is reported, not
      // retried, so the others still get stopped.
      closed = true;
      try {
        node.close();
      } catch (IOException | RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IOException(e);
      }
    }

    @Override
    public boolean awaitExit(Duration timeout) {
      return closed;
    }

    @Override
    public void kill() throws IOException {
      terminate();
    }

    @Override
    public OptionalInt exitCode() {
      return closed ? OptionalInt.of(0) : OptionalInt.empty();
    }
  }

  /** A node in a JVM of its own. */
  record OwnProcess(Process process) implements LaunchedNode {
    @Override
    public boolean isAlive() {
      return process.isAlive();
    }

    @Override
    public void terminate() {
      process.destroy();
    }

    @Override
    public boolean awaitExit(Duration timeout) throws InterruptedException {
      return process.waitFor(Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS);
    }

    @Override
    public void kill() {
      process.destroyForcibly();
    }

    @Override
    public OptionalInt exitCode() {
      return process.isAlive() ? OptionalInt.empty() : OptionalInt.of(process.exitValue());
    }

    Optional<Long> pid() {
      return Optional.of(process.pid());
    }
  }
}
