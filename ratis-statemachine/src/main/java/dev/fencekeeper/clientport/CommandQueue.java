package dev.fencekeeper.clientport;

import dev.fencekeeper.client.wire.RequestKinds;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.statemachine.PendingSlot;
import dev.fencekeeper.statemachine.PendingSlots;
import dev.fencekeeper.statemachine.WireCodec;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.ResourceUnavailableException;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;
import org.apache.ratis.util.JavaUtils;

/**
 * The leader's queue of client commands, from every client and stream of this node, packed into
 * shared log entries. Every Raft entry costs a round to the followers and an fsync on each node,
 * whatever it carries; that cost, not a command's own work, sets the throughput. So at most {@code
 * maxInFlight} entries are outstanding, and the commands that arrive meanwhile go out together, as
 * one {@code BatchRequest} of up to {@code limits.requests-per-batch.max} commands and {@code
 * limits.value.max-bytes} of values, when an entry comes back. A lone command goes at once, as
 * itself.
 *
 * <p>Each request keeps its own {@code caller}; the entry is logged with {@code inner_callers}, so
 * apply judges each command by its own identity. Each command gets exactly the answer it would have
 * had alone (fencing.proto, BatchRequest). Commands leave in the order they arrived, so one
 * client's pipelined commands are applied in the order it sent them.
 *
 * <p>One pending slot ({@code overload.pending-writes.max}) is taken per command when it is queued
 * and given back when its answer is delivered: queued, in flight and unapplied commands together
 * never exceed the bound, and one beyond is answered OVERLOADED at once.
 */
final class CommandQueue {
  /** What a command was answered, and the log index of the entry that carried it (0: none). */
  record Answer(Response response, long logIndex) {}

  private final LocalRaft raft;
  private final Redirects redirects;
  private final PendingSlots slots;
  private final Executor replies;
  private final int maxInFlight;
  private final int maxCommands;
  private final long maxValueBytes;
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();
  private int inFlight;
  // Drain requests not yet served; the thread that raises it from 0 drains until it is back at 0.
  private final AtomicInteger drainRequests = new AtomicInteger();

  /**
   * @param replies where answers of entries with several commands are handed out, off the thread
   *     that completes Ratis's reply (for a command applied here: the apply thread)
   */
  CommandQueue(
      LocalRaft raft,
      Redirects redirects,
      PendingSlots slots,
      Limits limits,
      Executor replies,
      int maxInFlight) {
    this.raft = raft;
    this.redirects = redirects;
    this.slots = slots;
    this.replies = replies;
    this.maxInFlight = maxInFlight;
    this.maxCommands = limits.maxRequestsPerBatch();
    this.maxValueBytes = limits.maxValueBytes();
  }

  /** Commands queued or in flight, not yet answered. */
  int pending() {
    return slots.inUse();
  }

  /**
   * Queues {@code request} (a command, or a client's whole batch, its caller and its inner callers
   * stamped); completes with its answer. OVERLOADED at once when the leader already holds {@code
   * overload.pending-writes.max} commands.
   */
  CompletableFuture<Answer> submit(Request request) {
    boolean batch = request.getCommandCase() == Request.CommandCase.BATCH;
    int commands = batch ? request.getBatch().getRequestsCount() : 1;
    PendingSlot slot = slots.tryTake(Math.max(1, commands));
    if (slot == null) {
      return CompletableFuture.completedFuture(
          new Answer(WireCodec.toResponse(slots.overloaded()), 0));
    }
    Pending pending =
        new Pending(
            request,
            slot,
            valueBytes(request),
            !batch && RequestKinds.isBatchable(request.getCommandCase()));
    synchronized (this) {
      queue.add(pending);
    }
    drain();
    return pending.answer;
  }

  /**
   * Sends what the in-flight bound allows. One thread at a time drains, so entries leave in queue
   * order; a thread that finds another draining leaves its request to it and returns at once. No
   * lock is held while submitting to Ratis.
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

  /** The head of the queue alone, or with the batchable commands behind it, within the bounds. */
  private List<Pending> takeNext() {
    List<Pending> next = new ArrayList<>();
    Pending head = queue.poll();
    next.add(head);
    if (!head.batchable) {
      return next;
    }
    long bytes = head.valueBytes;
    while (next.size() < maxCommands && !queue.isEmpty()) {
      Pending candidate = queue.peek();
      if (!candidate.batchable || bytes + candidate.valueBytes > maxValueBytes) {
        break;
      }
      bytes += candidate.valueBytes;
      next.add(queue.poll());
    }
    return next;
  }

  private void send(List<Pending> entry) {
    Request request = entry.size() == 1 ? entry.get(0).request : batchOf(entry);
    CompletableFuture<RaftClientReply> reply = raft.write(request.toByteString());
    // Answered before anything was appended (not leader, Ratis's own bound): nothing was applied.
    boolean early = reply.isDone();
    reply.whenComplete(
        (r, error) -> {
          if (entry.size() == 1 && early) {
            finish(entry, r, error, true);
          } else {
            replies.execute(() -> finish(entry, r, error, early));
          }
        });
  }

  private void finish(List<Pending> entry, RaftClientReply reply, Throwable error, boolean early) {
    synchronized (this) {
      inFlight--;
    }
    try {
      deliver(entry, reply, error, early);
    } finally {
      drain();
    }
  }

  private static Request batchOf(List<Pending> entry) {
    BatchRequest.Builder batch = BatchRequest.newBuilder();
    for (Pending p : entry) {
      batch.addRequests(p.request);
    }
    return Request.newBuilder().setBatch(batch).build();
  }

  private void deliver(List<Pending> entry, RaftClientReply reply, Throwable error, boolean early) {
    Response whole;
    long index = 0;
    if (error != null || !reply.isSuccess()) {
      whole = failure(error != null ? error : reply.getException(), early);
    } else {
      index = reply.getLogIndex();
      whole = parse(reply);
    }
    if (entry.size() > 1
        && whole.getCode() == ResultCode.BATCH_ANSWERED
        && whole.getBatchCount() == entry.size()) {
      for (int i = 0; i < entry.size(); i++) {
        entry.get(i).complete(new Answer(whole.getBatch(i), index));
      }
      return;
    }
    if (entry.size() > 1 && whole.getCode() == ResultCode.BATCH_ANSWERED) {
      whole =
          WireCodec.internal(
              "a batch of "
                  + entry.size()
                  + " commands was answered with "
                  + whole.getBatchCount()
                  + " answers");
    }
    for (Pending p : entry) {
      p.complete(new Answer(whole, index));
    }
  }

  private static Response parse(RaftClientReply reply) {
    try {
      return Response.parseFrom(reply.getMessage().getContent().asReadOnlyByteBuffer());
    } catch (InvalidProtocolBufferException e) {
      return WireCodec.internal("the state machine's answer did not decode: " + e.getMessage());
    }
  }

  /**
   * The answer to a command Ratis did not apply: refused before it was appended ({@code early}:
   * nothing changed), or left pending when leadership moved (it may yet be applied by the next
   * leader: UNAVAILABLE, and a retry with the same request id is safe).
   */
  private Response failure(Throwable error, boolean early) {
    Throwable cause = JavaUtils.unwrapCompletionException(error);
    if (cause instanceof ResourceUnavailableException) {
      return Response.newBuilder()
          .setCode(ResultCode.OVERLOADED)
          .setMessage("the leader's Raft server is full: " + cause.getMessage() + "; retry later")
          .build();
    }
    if (early) {
      return cause instanceof NotLeaderException
              || cause instanceof LeaderNotReadyException
              || cause instanceof LeaderSteppingDownException
              || !(cause instanceof RuntimeException)
          ? redirects.notLeader()
          : WireCodec.internal("the command was not submitted: " + cause);
    }
    return redirects
        .redirect(
            ResultCode.UNAVAILABLE,
            "the command was pending when this node stopped leading ("
                + cause.getClass().getSimpleName()
                + "): it may or may not have been applied; retry with the same request id")
        .build();
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
    final PendingSlot slot;
    final long valueBytes;
    final boolean batchable;
    final CompletableFuture<Answer> answer = new CompletableFuture<>();

    Pending(Request request, PendingSlot slot, long valueBytes, boolean batchable) {
      this.request = request;
      this.slot = slot;
      this.valueBytes = valueBytes;
      this.batchable = batchable;
    }

    void complete(Answer a) {
      slot.release();
      answer.complete(a);
    }
  }
}
