package dev.fencekeeper.clientport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;

/** The messages of one streaming call, as they arrive, and how it ended. */
final class Collector<T> implements StreamObserver<T> {
  final BlockingQueue<T> messages = new LinkedBlockingQueue<>();
  final CompletableFuture<Throwable> ended = new CompletableFuture<>();

  @Override
  public void onNext(T value) {
    messages.add(value);
  }

  @Override
  public void onError(Throwable t) {
    ended.complete(t);
  }

  @Override
  public void onCompleted() {
    ended.complete(null);
  }

  /** The next message, waiting up to {@code within}; fails if none comes. */
  T next(Duration within) throws InterruptedException {
    T next = messages.poll(within.toMillis(), TimeUnit.MILLISECONDS);
    if (next == null) {
      throw new AssertionError("no message within " + within + "; ended: " + ended.getNow(null));
    }
    return next;
  }

  /** Messages up to and including the first that matches, waiting up to {@code within} for it. */
  List<T> until(Predicate<T> last, Duration within) throws InterruptedException {
    List<T> seen = new ArrayList<>();
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      long left = deadline - System.nanoTime();
      T next = left <= 0 ? null : messages.poll(left, TimeUnit.NANOSECONDS);
      if (next == null) {
        throw new AssertionError("no matching message within " + within + "; saw " + seen);
      }
      seen.add(next);
      if (last.test(next)) {
        return seen;
      }
    }
  }
}
