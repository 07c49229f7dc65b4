package dev.fencekeeper.tools.bench;

import dev.fencekeeper.tools.bench.Workload.Step;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.time.Duration;
import java.util.Optional;

/**
 * The bench's workloads over an anchor's lock recipe: each workload's loop written once, each
 * anchor supplying only its recipe's operations ({@link Lock}).
 */
final class AnchorWorkers {
  private AnchorWorkers() {}

  /**
   * One resource of an anchor's lock recipe, used by one worker (W6: several share a resource).
   *
   * @param <H> what a holder keeps: its proof of holding and its token
   */
  interface Lock<H> {
    /** Creates what the resource needs before its first acquire (znodes, a session). */
    void open();

    /**
     * The lock: with {@code wait} zero only when free, else in line for at most {@code wait}; empty
     * when not granted. Throws on the system's error.
     */
    Optional<H> acquire(Duration wait) throws Exception;

    /** The lock, or an IllegalStateException saying why not. */
    H acquireOrThrow();

    /** The fenced write: OK when applied, {@link #refusal} when refused for the token. */
    Step write(H held);

    Step release(H held);

    /** The step of a write refused for its token: the answer W3 wants, a failure anywhere else. */
    Step refusal();

    /** The system's own name for an acquire's error, in a failure's reason. */
    default String describe(Exception e) {
      return e.getMessage();
    }

    /** Ends what {@link #open} started that outlives a release (etcd's session lease). */
    default void close() {}
  }

  /** W1: acquire, one fenced write, release. */
  static <H> Worker lockChurn(Lock<H> lock) {
    return cycles(lock, Duration.ZERO, "acquire HELD");
  }

  /** W2: one lock held for the whole run, fenced writes in a loop. */
  static <H> Worker fencedWrites(Lock<H> lock) {
    return new Worker() {
      private H held;

      @Override
      public void setUp() {
        lock.open();
        held = lock.acquireOrThrow();
      }

      @Override
      public Step step() {
        return lock.write(held);
      }

      @Override
      public void tearDown() {
        lock.release(held);
        lock.close();
      }
    };
  }

  /**
   * W3: acquire and release (the stale holder), acquire again (the newer one), then the stale
   * holder's write, which must be refused.
   */
  static <H> Worker staleReplay(Lock<H> lock) {
    return new Worker() {
      private H stale;
      private H newer;

      @Override
      public void setUp() {
        lock.open();
      }

      @Override
      public long prepare() {
        if (newer != null) {
          lock.release(newer);
          newer = null;
        }
        stale = lock.acquireOrThrow();
        lock.release(stale);
        newer = lock.acquireOrThrow();
        return 0;
      }

      @Override
      public Step step() {
        Step r = lock.write(stale);
        if (r.kind() == Step.Kind.OK) {
          return Step.STALE_ACCEPTED;
        }
        return r == lock.refusal() ? Step.OK : r;
      }

      @Override
      public void tearDown() {
        if (newer != null) {
          lock.release(newer);
        }
        lock.close();
      }
    };
  }

  /** W6: in line for a shared resource for at most {@link Workload#CONTENDED_WAIT}. */
  static <H> Worker contended(Lock<H> lock) {
    return cycles(
        lock,
        Workload.CONTENDED_WAIT,
        "acquire: waited " + Workload.CONTENDED_WAIT.toSeconds() + " s");
  }

  /** Cycles of acquire (within {@code wait}), one write, release; {@code notGranted} otherwise. */
  private static <H> Worker cycles(Lock<H> lock, Duration wait, String notGranted) {
    return new Worker() {
      @Override
      public void setUp() {
        lock.open();
      }

      @Override
      public Step step() {
        return cycle(lock, wait, notGranted);
      }

      @Override
      public void tearDown() {
        lock.close();
      }
    };
  }

  /** Acquire, one write, release: the write's failure first, else the release's outcome. */
  private static <H> Step cycle(Lock<H> lock, Duration wait, String notGranted) {
    Optional<H> held;
    try {
      held = lock.acquire(wait);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Step.failed("interrupted");
    } catch (Exception e) {
      return Step.failed("acquire " + lock.describe(e));
    }
    if (held.isEmpty()) {
      return Step.failed(notGranted);
    }
    Step written = lock.write(held.get());
    Step released = lock.release(held.get());
    return written.kind() != Step.Kind.OK ? written : released;
  }
}
