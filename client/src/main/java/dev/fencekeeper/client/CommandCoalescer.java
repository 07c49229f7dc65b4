package dev.fencekeeper.client;

import dev.fencekeeper.client.wire.RequestKinds;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
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
 * maxInFlight} entries are outstanding at once, and the commands submitted meanwhile wait here and
 * go out together, as one {@link BatchRequest}, when an entry comes back.
 *
 * <p>A lone command is sent at once and as itself: coalescing never delays a client that has
 * nothing else in flight. Commands leave in the order they were submitted, each batch is applied in
 * its order, and each command gets exactly the answer it would have had alone (fencing.proto,
 * BatchRequest), so every per-request guarantee holds. A batch that fails as a whole (refused as
 * OVERLOADED, no node answering) fails each of its commands the same way.
 */
final class CommandCoalescer {
  private final Function<Request, CompletableFuture<Response>> transport;
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
   * @param transport sends one request (one log entry on the leader) and completes with its answer
   * @param maxInFlight entries outstanding at once; further commands wait and are batched
   * @param maxCommands commands per batch (the cluster's {@code limits.requests-per-batch.max})
   * @param maxValueBytes value bytes per batch, a batch being one entry (the cluster's {@code
   *     limits.value.max-bytes})
   */
  CommandCoalescer(
      Function<Request, CompletableFuture<Response>> transport,
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

  /** Sends {@code request}, alone or with others; completes with its own answer. */
  CompletableFuture<Response> submit(Request request) {
    Pending pending = new Pending(request, valueBytes(request));
    synchronized (this) {
      queue.add(pending);
    }
    drain();
    return pending.answer;
  }

  /** Whether a request may share an entry with others ({@link RequestKinds#isBatchable}). */
  static boolean isBatchable(Request request) {
    return RequestKinds.isBatchable(request.getCommandCase());
  }

  /**
   * Sends what the in-flight bound allows. One thread at a time drains, so entries leave in queue
   * order; a thread that finds another draining leaves its request to it and returns at once. No
   * lock is held while sending: Ratis completes replies while holding its own client lock, and a
   * reply's completion drains too, so waiting for a lock of ours there could deadlock against a
   * sender waiting for Ratis's.
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
    if (!isBatchable(head.request)) {
      return next;
    }
    long bytes = head.valueBytes;
    while (next.size() < maxCommands && !queue.isEmpty()) {
      Pending candidate = queue.peek();
      if (!isBatchable(candidate.request) || bytes + candidate.valueBytes > maxValueBytes) {
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
      sent = transport.apply(entry.size() == 1 ? entry.get(0).request : batchOf(entry));
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

  private static Request batchOf(List<Pending> entry) {
    BatchRequest.Builder batch = BatchRequest.newBuilder();
    for (Pending p : entry) {
      batch.addRequests(p.request);
    }
    return Request.newBuilder().setBatch(batch).build();
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

  private static long valueBytes(Request request) {
    if (request.getCommandCase() != Request.CommandCase.WRITE) {
      return 0;
    }
    long bytes = 0;
    for (var write : request.getWrite().getWritesList()) {
      bytes += write.getValue().size();
    }
    return bytes;
  }

  private static final class Pending {
    final Request request;
    final long valueBytes;
    final CompletableFuture<Response> answer = new CompletableFuture<>();

    Pending(Request request, long valueBytes) {
      this.request = request;
      this.valueBytes = valueBytes;
    }
  }
}
