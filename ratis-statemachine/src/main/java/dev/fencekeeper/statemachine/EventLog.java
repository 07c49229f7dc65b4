package dev.fencekeeper.statemachine;

import dev.fencekeeper.client.wire.WaiterWakeups;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.WatchRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The recent lease events of one replica, in commit order, for watchers. Events are derived from
 * applied entries, so every replica holds the same events at the same positions (index, seq) and a
 * watcher can resume on any of them from the last position it saw. Bounded: a watcher that falls
 * further behind than the log keeps is told COMPACTED and must re-read state, as with etcd's
 * compacted revisions.
 */
final class EventLog implements EventFeed, AutoCloseable {
  static final int DEFAULT_CAPACITY = 100_000;
  private static final long MAX_WAIT_MS = 5_000;
  private static final int DEFAULT_MAX_EVENTS = 1_000;

  private final int capacity;
  private final ArrayDeque<LeaseEvent> events = new ArrayDeque<>();
  private final List<PendingWatch> pending = new ArrayList<>();
  private final java.util.Map<String, Integer> waitingByCaller = new java.util.HashMap<>();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "fencekeeper-watch-timeouts");
            t.setDaemon(true);
            return t;
          });
  // Events at or before this position may be missing here: before the snapshot this replica started
  // from, or dropped for capacity.
  private long horizonIndex;
  private int horizonSeq = Integer.MAX_VALUE;
  private long appliedIndex;
  private EventFeed.Listener listener = EventFeed.Listener.NONE;

  EventLog(int capacity) {
    this.capacity = capacity;
  }

  /** Starts over at a snapshot: nothing at or before {@code index} is known. */
  synchronized void reset(long index) {
    events.clear();
    horizonIndex = index;
    horizonSeq = Integer.MAX_VALUE;
    appliedIndex = index;
    listener.onReset(index);
  }

  @Override
  public synchronized void setListener(EventFeed.Listener listener) {
    this.listener = listener == null ? EventFeed.Listener.NONE : listener;
  }

  @Override
  public synchronized void replay(
      long afterIndex, int afterSeq, Predicate<LeaseEvent> filter, Consumer<Replay> underLock) {
    Replay replay;
    if (before(afterIndex, afterSeq, horizonIndex, horizonSeq)) {
      replay = new Replay(true, horizonIndex, appliedIndex, List.of());
    } else {
      List<LeaseEvent> found = new ArrayList<>();
      for (Iterator<LeaseEvent> it = events.descendingIterator(); it.hasNext(); ) {
        LeaseEvent e = it.next();
        if (!before(afterIndex, afterSeq, e.getIndex(), e.getSeq())) {
          break;
        }
        if (filter.test(e)) {
          found.add(e);
        }
      }
      java.util.Collections.reverse(found);
      replay = new Replay(false, horizonIndex, appliedIndex, found);
    }
    underLock.accept(replay);
  }

  @Override
  public synchronized long appliedIndex() {
    return appliedIndex;
  }

  /**
   * Records the events of the entry at {@code index} (possibly none) and wakes matching watchers.
   */
  void append(long index, List<dev.fencekeeper.core.LeaseEvent> applied) {
    List<PendingWatch> ready = new ArrayList<>();
    synchronized (this) {
      appliedIndex = index;
      if (applied.isEmpty()) {
        listener.onApplied(index, List.of());
        return;
      }
      List<LeaseEvent> added = new ArrayList<>(applied.size());
      for (int seq = 0; seq < applied.size(); seq++) {
        LeaseEvent e = WireCodec.toProto(applied.get(seq), index, seq);
        events.addLast(e);
        added.add(e);
      }
      listener.onApplied(index, added);
      while (events.size() > capacity) {
        LeaseEvent dropped = events.removeFirst();
        horizonIndex = dropped.getIndex();
        horizonSeq = dropped.getSeq();
      }
      for (Iterator<PendingWatch> it = pending.iterator(); it.hasNext(); ) {
        PendingWatch w = it.next();
        Response answer = answerNow(w.request);
        if (answer != null) {
          it.remove();
          forget(w);
          ready.add(w.withAnswer(answer));
        }
      }
    }
    for (PendingWatch w : ready) {
      w.future.complete(w.answer);
    }
  }

  /** As {@link #watch(WatchRequest, String, int)} for an anonymous caller without a bound. */
  CompletableFuture<Response> watch(WatchRequest request) {
    return watch(request, "", Integer.MAX_VALUE);
  }

  /**
   * Answers at once if there are matching events (or the position is compacted), else waits for
   * some; OVERLOADED when {@code caller} already has {@code maxWaiting} watches waiting here.
   */
  CompletableFuture<Response> watch(WatchRequest request, String caller, int maxWaiting) {
    synchronized (this) {
      Response now = answerNow(request);
      if (now != null) {
        return CompletableFuture.completedFuture(now);
      }
      long waitMs = Math.min(MAX_WAIT_MS, Math.max(0, request.getTimeoutMs()));
      if (waitMs == 0) {
        return CompletableFuture.completedFuture(empty());
      }
      int waiting = waitingByCaller.getOrDefault(caller, 0);
      if (waiting >= maxWaiting) {
        return CompletableFuture.completedFuture(
            Response.newBuilder()
                .setCode(ResultCode.OVERLOADED)
                .setMessage(
                    "identity '"
                        + caller
                        + "' already has "
                        + waiting
                        + " watches waiting on this node"
                        + " (limits.watches-per-client.max); nothing is watched, retry later")
                .build());
      }
      PendingWatch w = new PendingWatch(request, caller, new CompletableFuture<>(), null);
      pending.add(w);
      waitingByCaller.merge(caller, 1, Integer::sum);
      timer.schedule(() -> expire(w), waitMs, TimeUnit.MILLISECONDS);
      return w.future;
    }
  }

  private void expire(PendingWatch w) {
    Response answer;
    synchronized (this) {
      if (!pending.remove(w)) {
        return;
      }
      forget(w);
      answer = empty();
    }
    w.future.complete(answer);
  }

  private Response answerNow(WatchRequest request) {
    if (before(request.getAfterIndex(), request.getAfterSeq(), horizonIndex, horizonSeq)) {
      return Response.newBuilder()
          .setCode(ResultCode.COMPACTED)
          .setMessage(
              "events up to index "
                  + horizonIndex
                  + " are no longer kept on this node; re-read the "
                  + "state and watch from index "
                  + appliedIndex)
          .setAppliedIndex(appliedIndex)
          .build();
    }
    int max = request.getMaxEvents() > 0 ? request.getMaxEvents() : DEFAULT_MAX_EVENTS;
    Response.Builder found = Response.newBuilder().setCode(ResultCode.FOUND);
    for (Iterator<LeaseEvent> it = events.descendingIterator(); it.hasNext(); ) {
      LeaseEvent e = it.next();
      if (!before(request.getAfterIndex(), request.getAfterSeq(), e.getIndex(), e.getSeq())) {
        break;
      }
      if (matches(request, e)) {
        found.addEvents(e);
      }
    }
    if (found.getEventsCount() == 0) {
      return null;
    }
    // Collected newest first; deliver in commit order, and only the oldest `max` so none is
    // skipped.
    List<LeaseEvent> inOrder = new ArrayList<>(found.getEventsList());
    java.util.Collections.reverse(inOrder);
    List<LeaseEvent> batch = inOrder.subList(0, Math.min(max, inOrder.size()));
    if (!request.getWaiterRequestId().isEmpty()
        && !WaiterWakeups.mayConcern(batch, request.getWaiterRequestId())) {
      return null; // another waiter's grant: this one sleeps on, and at the timeout learns the
      // applied index
    }
    return Response.newBuilder()
        .setCode(ResultCode.FOUND)
        .addAllEvents(batch)
        .setAppliedIndex(batch.get(batch.size() - 1).getIndex())
        .build();
  }

  private Response empty() {
    return Response.newBuilder()
        .setCode(ResultCode.NOT_FOUND)
        .setAppliedIndex(appliedIndex)
        .build();
  }

  private static boolean matches(WatchRequest request, LeaseEvent e) {
    if (!request.getResource().isEmpty()) {
      return e.getResource().equals(request.getResource());
    }
    return e.getResource().startsWith(request.getPrefix());
  }

  /** Position (i1, s1) strictly before (i2, s2). */
  private static boolean before(long i1, int s1, long i2, int s2) {
    return i1 < i2 || (i1 == i2 && s1 < s2);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }

  private void forget(PendingWatch w) {
    waitingByCaller.computeIfPresent(w.caller, (caller, n) -> n > 1 ? n - 1 : null);
  }

  private record PendingWatch(
      WatchRequest request, String caller, CompletableFuture<Response> future, Response answer) {
    PendingWatch withAnswer(Response a) {
      return new PendingWatch(request, caller, future, a);
    }
  }
}
