package dev.fencekeeper.clientport;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCallStreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The messages a node sends on one server stream (a Watch, a Session), queued and sent as the
 * client reads them. Producers (the apply thread handing on events, answers completing) only queue:
 * they never wait for the client. A drain, one at a time on {@code executor}, sends while the
 * transport is ready ({@link ServerCallStreamObserver#isReady}) and resumes when it becomes ready
 * again. A client that lets more than {@code maxQueued} messages wait for longer than {@value
 * #GRACE_MS} ms, or more than {@value #HARD_FACTOR} times as many at any moment, is cut off: the
 * queue is dropped, it gets {@code overloaded} as the last message and the stream ends, so a client
 * that never reads holds a bounded amount of the node's memory and slows nobody else. The grace
 * lets a client that reads keep up with a burst (one entry can end thousands of a session's leases
 * at once) without being taken for one that does not.
 */
final class OutboundStream<T> {
  private static final Logger LOG = LoggerFactory.getLogger(OutboundStream.class);

  /** How long more than maxQueued messages may wait before the stream is cut off. */
  static final long GRACE_MS = 2_000;

  /** How many times maxQueued messages may wait at any moment. */
  static final int HARD_FACTOR = 4;

  private final ServerCallStreamObserver<T> out;
  private final Executor executor;
  private final ScheduledExecutorService timer;
  private volatile boolean overChecked;
  private final int maxQueued;
  private final Queue<T> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  private final AtomicInteger drainRequests = new AtomicInteger();
  private final Runnable onEnd;
  // Set once: the last message to send after the queue (null: none), and whether to drop the queue.
  private volatile Ending<T> ending;
  private volatile boolean ended;

  private record Ending<M>(M last, boolean dropQueue) {}

  /**
   * @param onEnd runs once when the stream ends, however: finished, cut off, or cancelled by the
   *     client
   */
  OutboundStream(
      ServerCallStreamObserver<T> out,
      Executor executor,
      ScheduledExecutorService timer,
      int maxQueued,
      Runnable onEnd) {
    this.out = out;
    this.executor = executor;
    this.timer = timer;
    this.maxQueued = maxQueued;
    this.onEnd = onEnd;
    out.setOnReadyHandler(this::drain);
    out.setOnCancelHandler(this::cancelled);
  }

  /**
   * Queues {@code message}; false when the stream is ending. Past the bounds, the stream is cut off
   * with {@code overloaded} instead.
   */
  boolean offer(T message, T overloaded) {
    if (ending != null) {
      return false;
    }
    int waiting = queued.incrementAndGet();
    if (waiting > (long) HARD_FACTOR * maxQueued) {
      cutOff(overloaded);
      return false;
    }
    queue.add(message);
    if (waiting > maxQueued && !overChecked) {
      overChecked = true;
      timer.schedule(() -> checkBacklog(overloaded), GRACE_MS, TimeUnit.MILLISECONDS);
    }
    drain();
    return true;
  }

  /** Still more than maxQueued waiting after the grace: the client does not read. */
  private void checkBacklog(T overloaded) {
    if (queued.get() > maxQueued) {
      cutOff(overloaded);
    } else {
      overChecked = false;
    }
  }

  /** Sends what is queued, then {@code last} (null: nothing more), and ends the stream. */
  void finish(T last) {
    end(new Ending<>(last, false));
  }

  /** Drops what is queued, sends {@code last} and ends the stream. */
  void cutOff(T last) {
    end(new Ending<>(last, true));
  }

  boolean isEnded() {
    return ending != null;
  }

  private void end(Ending<T> how) {
    synchronized (this) {
      if (ending != null) {
        return;
      }
      ending = how;
    }
    drain();
  }

  private void cancelled() {
    synchronized (this) {
      if (ending == null) {
        ending = new Ending<>(null, true);
      }
    }
    markEnded();
  }

  private void drain() {
    if (drainRequests.getAndIncrement() == 0) {
      executor.execute(this::drainNow);
    }
  }

  private void drainNow() {
    int served = 1;
    do {
      sendWhileReady();
      served = drainRequests.addAndGet(-served);
    } while (served != 0);
  }

  private void sendWhileReady() {
    if (ended) {
      queue.clear();
      return;
    }
    try {
      Ending<T> how = ending;
      if (how != null && how.dropQueue()) {
        queue.clear();
      }
      while (out.isReady()) {
        T next = queue.poll();
        if (next == null) {
          break;
        }
        queued.decrementAndGet();
        out.onNext(next);
      }
      how = ending;
      if (how != null && (how.dropQueue() || queue.isEmpty())) {
        if (how.last() != null) {
          out.onNext(how.last());
        }
        out.onCompleted();
        markEnded();
      }
    } catch (RuntimeException e) {
      // The call ended under us (the client went away): nothing more can be sent.
      LOG.debug("Stream ended while sending: {}", e.toString());
      markEnded();
    }
  }

  private void markEnded() {
    boolean first;
    synchronized (this) {
      first = !ended;
      ended = true;
    }
    if (first) {
      queue.clear();
      onEnd.run();
    }
  }
}
