package dev.fencekeeper.tools.bench;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import org.HdrHistogram.Histogram;

/**
 * W6's hand-off, measured alike on every system that has a blocking lock: {@code waiters} workers
 * in line for one resource, each taking it, making one fenced write and releasing it. A hand-off is
 * the time from the previous holder's release being committed (its release call returned) to the
 * next holder's first accepted write; it carries the grant, the waiter's wake-up and that write.
 */
final class HandOff {
  private static final long HIGHEST_MICROS = TimeUnit.MINUTES.toMicros(5);

  private HandOff() {}

  /** One worker's three operations on the shared resource. */
  interface Contender {
    /** Blocks in line until granted; null when {@link Workload#CONTENDED_WAIT} ran out first. */
    Object acquire() throws Exception;

    /** The holder's fenced write; whether it was accepted. */
    boolean write(Object held) throws Exception;

    /** Returns once the release is committed. */
    void release(Object held) throws Exception;
  }

  /**
   * What one system's hand-off run measured; {@code micros} holds one value per hand-off in the
   * window.
   */
  record Figures(
      String system, int waiters, long handOffs, long failed, double seconds, Histogram micros) {
    double handOffsPerSecond() {
      return handOffs / seconds;
    }

    double percentileMs(double percentile) {
      return micros.getTotalCount() == 0
          ? Double.NaN
          : micros.getValueAtPercentile(percentile) / 1000.0;
    }
  }

  /** A release: when the releaser saw it committed (0 until then). */
  private static final class Release {
    volatile long committedAt;
  }

  private record Pair(Release release, long firstWriteAt) {}

  static Figures measure(
      String system,
      int waiters,
      IntFunction<Contender> contenders,
      Duration warmup,
      Duration duration)
      throws InterruptedException {
    AtomicReference<Release> last = new AtomicReference<>();
    ConcurrentLinkedQueue<Pair> pairs = new ConcurrentLinkedQueue<>();
    AtomicLong failed = new AtomicLong();
    long measureFrom = System.nanoTime() + warmup.toNanos();
    long measureTo = measureFrom + duration.toNanos();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < waiters; i++) {
      Contender contender = contenders.apply(i);
      Thread t =
          new Thread(
              () -> {
                while (System.nanoTime() < measureTo) {
                  try {
                    Object held = contender.acquire();
                    if (held == null) {
                      failed.incrementAndGet();
                      continue;
                    }
                    // Set before this holder's release is sent: the next holder, granted only by
                    // that release, finds it.
                    Release previous = last.get();
                    boolean accepted = contender.write(held);
                    long writtenAt = System.nanoTime();
                    if (!accepted) {
                      failed.incrementAndGet();
                    } else if (previous != null
                        && writtenAt >= measureFrom
                        && writtenAt <= measureTo) {
                      pairs.add(new Pair(previous, writtenAt));
                    }
                    Release mine = new Release();
                    last.set(mine);
                    contender.release(held);
                    mine.committedAt = System.nanoTime();
                  } catch (InterruptedException e) {
                    return;
                  } catch (Exception e) {
                    failed.incrementAndGet();
                  }
                }
              },
              "bench-handoff-" + system + "-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join(duration.plus(warmup).plus(Workload.CONTENDED_WAIT).plusSeconds(5).toMillis());
    }
    Histogram micros = new Histogram(HIGHEST_MICROS, 3);
    long count = 0;
    for (Pair p : pairs) {
      long committed = p.release().committedAt;
      if (committed == 0) {
        continue; // the releaser never saw its release answered
      }
      count++;
      // The next holder's write can only follow the release's commit; a reply slower than grant and
      // write together counts as an immediate hand-off.
      micros.recordValue(
          Math.min(HIGHEST_MICROS, Math.max(1, (p.firstWriteAt() - committed) / 1000)));
    }
    return new Figures(system, waiters, count, failed.get(), duration.toNanos() / 1e9, micros);
  }

  /** fencekeeper's blocking acquire (queued, FIFO), {@code lease.write}, {@code lease.close}. */
  static Contender fencekeeper(FencingClient client, String resource) {
    return new Contender() {
      @Override
      public Object acquire() {
        try {
          return client.acquire(resource, Duration.ofSeconds(10), Workload.CONTENDED_WAIT);
        } catch (dev.fencekeeper.client.LeaseHeldException e) {
          return null;
        }
      }

      @Override
      public boolean write(Object held) {
        return ((Lease) held).write("k", Workload.VALUE).isAccepted();
      }

      @Override
      public void release(Object held) {
        ((Lease) held).close();
      }
    };
  }
}
