package dev.fencekeeper.client;

import dev.fencekeeper.client.wire.RequestKinds;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.WriteRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Puts the concurrent commands of one client into shared log entries. Every Raft entry costs a
 * round to the followers, an fsync on each node and several thread hand-offs, whatever it carries;
 * on a small machine that cost, not the work of a command, sets the throughput. So at most {@code
 * maxInFlight} calls are outstanding at once, and the commands submitted meanwhile wait here and go
 * out together, as one Batch call, when a call comes back. The leader packs the commands of all its
 * clients into shared entries too, but one Batch call costs this client and the node one call where
 * dozens of concurrent commands would each cost their own (a same-run A/B of W2 at 64 workers,
 * docs/benchmarks.md).
 *
 * <p>A lone command is sent at once and as itself: coalescing never delays a client that has
 * nothing else in flight. Commands leave in the order they were submitted, each batch is applied in
 * its order, and each command gets exactly the answer it would have had alone (fencing.proto,
 * BatchRequest), so every per-request guarantee holds. A batch that fails as a whole (refused as
 * OVERLOADED, no node answering) fails each of its commands the same way.
 */
final class CommandCoalescer {
  private final Function<Rpc.Call<?>, CompletableFuture<Response>> transport;
  private final int maxInFlight;
  // Replaced when the cluster tells its own limits (FencingClient learns them); read under this
  // lock.
  private int maxCommands;
  private long maxValueBytes;
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();
  private int inFlight;
  // Drain requests not yet served; the thread that raises it from 0 drains until it is back at 0.
  private final AtomicInteger drainRequests = new AtomicInteger();

  /**
   * @param transport makes one call (a command, or a Batch of them) and completes with its answer
   * @param maxInFlight calls outstanding at once; further commands wait and are batched
   * @param maxCommands commands per batch (the cluster's {@code limits.requests-per-batch.max})
   * @param maxValueBytes value bytes per batch, a batch being one entry (the cluster's {@code
   *     limits.value.max-bytes})
   */
  CommandCoalescer(
      Function<Rpc.Call<?>, CompletableFuture<Response>> transport,
      int maxInFlight,
      int maxCommands,
      long maxValueBytes) {
    if (maxInFlight < 1 || maxCommands < 1) {
      throw new IllegalArgumentException("maxInFlight and maxCommands must be positive");
    }
    this.transport = transport;
    this.maxInFlight = maxInFlight;
    this.maxCommands = maxCommands;
    this.maxValueBytes = maxValueBytes;
  }

  /**
   * The cluster's own batch limits, once a node told them: batches are sized by these from now on.
   */
  synchronized void limits(int commands, long valueBytes) {
    if (commands >= 1 && valueBytes >= 1) {
      this.maxCommands = commands;
      this.maxValueBytes = valueBytes;
    }
  }

  /** Sends {@code call}, alone or with others; completes with its own answer. */
  CompletableFuture<Response> submit(Rpc.Call<?> call) {
    Pending pending = new Pending(call, valueBytes(call));
    synchronized (this) {
      queue.add(pending);
    }
    drain();
    return pending.answer;
  }

  /** Whether a command may share a Batch call with others ({@link RequestKinds#isBatchable}). */
  static boolean isBatchable(Rpc.Call<?> call) {
    return RequestKinds.isBatchable(call.rpc().kind);
  }

  /**
   * Sends what the in-flight bound allows. One thread at a time drains, so entries leave in queue
   * order; a thread that finds another draining leaves its request to it and returns at once. No
   * lock is held while sending: a call may complete on the sending thread (a refusal made before
   * anything is sent), and its completion drains too.
   */
  private void drain() {
    if (drainRequests.getAndIncrement() != 0) {
      return;
    }
    int served = 1;
    do {
      while (true) {
        List<Pending> next;
        synchronized (this) {
          dropAnswered();
          if (inFlight >= maxInFlight || queue.isEmpty()) {
            break;
          }
          next = takeNext();
          inFlight++;
        }
        send(next);
      }
      served = drainRequests.addAndGet(-served);
    } while (served != 0);
  }

  /**
   * Commands whose caller already has an answer (its call timed out while the command waited here)
   * are not sent at all: the caller was told "may or may not have been applied", and "not" is the
   * kinder truth.
   */
  private void dropAnswered() {
    queue.removeIf(p -> p.answer.isDone());
  }

  /**
   * The head of the queue alone, or with the batchable commands right behind it, within the bounds.
   */
  private List<Pending> takeNext() {
    List<Pending> next = new ArrayList<>();
    Pending head = queue.poll();
    next.add(head);
    if (!isBatchable(head.call)) {
      return next;
    }
    long bytes = head.valueBytes;
    while (next.size() < maxCommands && !queue.isEmpty()) {
      Pending candidate = queue.peek();
      if (!isBatchable(candidate.call) || bytes + candidate.valueBytes > maxValueBytes) {
        break;
      }
      bytes += candidate.valueBytes;
      next.add(queue.poll());
    }
    return next;
  }

  private void send(List<Pending> entry) {
    CompletableFuture<Response> sent;
    try {
      sent = transport.apply(entry.size() == 1 ? entry.get(0).call : batchOf(entry));
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    sent.whenComplete(
        (response, error) -> {
          synchronized (this) {
            inFlight--;
          }
          deliver(entry, response, error);
          drain();
        });
  }

  private static Rpc.Call<BatchRequest> batchOf(List<Pending> entry) {
    BatchRequest.Builder batch = BatchRequest.newBuilder();
    for (Pending p : entry) {
      batch.addRequests(Rpc.envelope(p.call));
    }
    return new Rpc.Call<>(Rpc.BATCH, batch.build());
  }

  private static void deliver(List<Pending> entry, Response response, Throwable error) {
    if (entry.size() == 1) {
      complete(entry.get(0), response, error);
      return;
    }
    if (error == null
        && response.getCode() == ResultCode.BATCH_ANSWERED
        && response.getBatchCount() == entry.size()) {
      for (int i = 0; i < entry.size(); i++) {
        entry.get(i).answer.complete(response.getBatch(i));
      }
      return;
    }
    if (error == null && response.getCode() == ResultCode.BATCH_ANSWERED) {
      error =
          new IllegalStateException(
              "a batch of "
                  + entry.size()
                  + " requests was answered with "
                  + response.getBatchCount()
                  + " answers");
    }
    // The batch failed as a whole (or was answered as a whole, e.g. INVALID_ARGUMENT): so did each
    // command.
    for (Pending p : entry) {
      complete(p, response, error);
    }
  }

  private static void complete(Pending p, Response response, Throwable error) {
    if (error != null) {
      p.answer.completeExceptionally(error);
    } else {
      p.answer.complete(response);
    }
  }

  private static long valueBytes(Rpc.Call<?> call) {
    if (!(call.message() instanceof WriteRequest write)) {
      return 0;
    }
    long bytes = 0;
    for (var change : write.getWritesList()) {
      bytes += change.getValue().size();
    }
    return bytes;
  }

  private static final class Pending {
    final Rpc.Call<?> call;
    final long valueBytes;
    final CompletableFuture<Response> answer = new CompletableFuture<>();

    Pending(Rpc.Call<?> call, long valueBytes) {
      this.call = call;
      this.valueBytes = valueBytes;
    }
  }
}
