package dev.fencekeeper.tools;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The one place that decides what a bounded verb's outcome is: the verb's own result or its
 * deadline, whichever comes first. While the verb runs, what it prints on stdout is held back; the
 * first of {@link #settleByVerb} and {@link #settleByDeadline} wins, and after that nothing the
 * other side writes reaches the real streams. So a verb whose answer arrives just after its
 * deadline cannot print a second result beside the timeout.
 *
 * <p>Commands get the streams of {@link #context}; unless {@link #bound} was called they pass
 * straight through (verbs without a deadline, and those that stream, such as {@code watch}).
 */
final class CallOutcome {
  private enum State {
    PASS_THROUGH,
    HELD,
    BY_VERB,
    BY_DEADLINE
  }

  private final CliContext real;
  private final CliContext gated;
  private final ByteArrayOutputStream held = new ByteArrayOutputStream();
  private final CountDownLatch sent = new CountDownLatch(1);
  private State state = State.PASS_THROUGH;

  CallOutcome(CliContext real) {
    this.real = real;
    this.gated =
        new CliContext(
            new GatedPrintStream(new Gate(real.out(), true), this),
            new GatedPrintStream(new Gate(real.err(), false), this),
            real.env(),
            real.workingDir(),
            real.in());
  }

  /** The context commands print through. */
  CliContext context() {
    return gated;
  }

  /** The streams the outcome itself is printed on once decided. */
  CliContext real() {
    return real;
  }

  /** From now on the verb's stdout is held until the outcome is settled. */
  synchronized void bound() {
    state = State.HELD;
  }

  /**
   * The verb has done its local preparation (options, files, certificates) and sends its first call
   * now: its deadline starts here. Verbs call it through {@link #callSent(CliContext)}.
   */
  void callSent() {
    sent.countDown();
  }

  /**
   * Marks the call of the verb printing to {@code context} as sent; a no-op outside {@link
   * CallOutcome} (a command constructed by hand).
   */
  static void callSent(CliContext context) {
    if (context.out() instanceof GatedPrintStream gated) {
      gated.outcome.callSent();
    }
  }

  /**
   * The verb has its answer (or knows it has none) and only formats and prints it from now on: the
   * deadline bounds the call, not the printing, so the verb's result is the outcome unless the
   * deadline came first. Verbs call it through {@link #answered(CliContext)}.
   */
  void answered() {
    settleByVerb();
  }

  /**
   * Marks the call of the verb printing to {@code context} as answered; a no-op outside {@link
   * CallOutcome} (a command constructed by hand).
   */
  static void answered(CliContext context) {
    if (context.out() instanceof GatedPrintStream gated) {
      gated.outcome.answered();
    }
  }

  /**
   * Waits until the verb has sent its call, has ended without one, or has prepared for longer than
   * {@code limit} (a verb is never left unbounded, even one that reads a slow stdin first).
   */
  void awaitSent(java.util.concurrent.Future<?> verb, java.time.Duration limit)
      throws InterruptedException {
    long end = System.nanoTime() + limit.toNanos();
    while (!sent.await(20, TimeUnit.MILLISECONDS)) {
      if (verb.isDone() || System.nanoTime() - end > 0) {
        return;
      }
    }
  }

  /**
   * The verb finished: if the deadline has not decided yet, its result is the outcome and what it
   * printed goes out now. Returns false when the deadline came first (what it printed is dropped).
   */
  synchronized boolean settleByVerb() {
    if (state == State.BY_DEADLINE) {
      return false;
    }
    if (state == State.HELD) {
      real.out().write(held.toByteArray(), 0, held.size());
      real.out().flush();
      held.reset();
    }
    state = State.BY_VERB;
    return true;
  }

  /**
   * The deadline passed: if the verb has not finished, the timeout is the outcome, and nothing the
   * verb prints from now on reaches the real streams. Returns false when the verb came first.
   */
  synchronized boolean settleByDeadline() {
    if (state == State.BY_VERB) {
      return false;
    }
    held.reset();
    state = State.BY_DEADLINE;
    return true;
  }

  private synchronized void write(PrintStream target, boolean isOut, byte[] b, int off, int len) {
    switch (state) {
      case BY_DEADLINE -> {
        // The outcome is printed; the verb's late words are not part of it.
      }
      case HELD -> {
        if (isOut) {
          held.write(b, off, len);
        } else {
          target.write(b, off, len);
        }
      }
      case PASS_THROUGH, BY_VERB -> target.write(b, off, len);
    }
  }

  private synchronized void flush(PrintStream target) {
    if (state != State.BY_DEADLINE) {
      target.flush();
    }
  }

  /** One real stream behind the gate. */
  private final class Gate extends OutputStream {
    private final PrintStream target;
    private final boolean isOut;

    Gate(PrintStream target, boolean isOut) {
      this.target = target;
      this.isOut = isOut;
    }

    @Override
    public void write(int b) {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      CallOutcome.this.write(target, isOut, b, off, len);
    }

    @Override
    public void flush() {
      CallOutcome.this.flush(target);
    }

    @Override
    public void close() throws IOException {
      flush();
    }
  }

  /** A print stream that knows the outcome it writes through, for {@link #callSent(CliContext)}. */
  private static final class GatedPrintStream extends PrintStream {
    private final CallOutcome outcome;

    GatedPrintStream(Gate gate, CallOutcome outcome) {
      super(gate, true, StandardCharsets.UTF_8);
      this.outcome = outcome;
    }
  }
}
