package dev.fencekeeper.clientport;

import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.statemachine.EventFeed;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * Hands each applied entry's lease events to the streams and calls of this node's client port that
 * follow them: a session's stream (by the event's session id), watches (by resource, or by prefix)
 * and waiting acquires (by resource and request id, on their grant). Runs on the apply thread for
 * every entry (see {@link EventFeed.Listener}), so it only looks up and queues: each receiver sends
 * on its own.
 *
 * <p>Because it runs before the entry's answers are sent, an answer to a command of an entry always
 * follows, on the same stream, every event of that entry and of every earlier one.
 */
final class EventHub implements EventFeed.Listener {

  /** Receives the events that concern it, in commit order; must not block. */
  interface Receiver {
    void onEvents(long index, List<LeaseEvent> events);

    /** The replica started over from a snapshot: events before {@code index} are missing. */
    void onGap(long index);
  }

  /** Receives the grant of one queued acquire. */
  interface GrantReceiver {
    void onGranted(LeaseEvent grant);
  }

  private record WaiterKey(String resource, String requestId) {}

  private final Map<String, Receiver> sessions = new ConcurrentHashMap<>();
  private final Map<String, List<Receiver>> byResource = new ConcurrentHashMap<>();
  private final List<PrefixWatch> byPrefix = new CopyOnWriteArrayList<>();
  private final Map<WaiterKey, GrantReceiver> waiters = new ConcurrentHashMap<>();

  private record PrefixWatch(String prefix, Receiver receiver) {}

  /**
   * Makes {@code receiver} the one stream of {@code sessionId}, unless a stream it may not replace
   * ({@code mayReplace} false) holds it: returns the stream that holds the session now (then {@code
   * receiver} was not added) or the one it replaced ({@code receiver} was added), or null when
   * there was none.
   */
  Receiver addSession(String sessionId, Receiver receiver, Predicate<Receiver> mayReplace) {
    Receiver[] before = new Receiver[1];
    sessions.compute(
        sessionId,
        (id, held) -> {
          before[0] = held;
          return held == null || mayReplace.test(held) ? receiver : held;
        });
    return before[0];
  }

  /** The stream that holds {@code sessionId}, or null. */
  Receiver session(String sessionId) {
    return sessions.get(sessionId);
  }

  void removeSession(String sessionId, Receiver receiver) {
    sessions.remove(sessionId, receiver);
  }

  /** Every session stream now open here. */
  List<Receiver> sessionReceivers() {
    return List.copyOf(sessions.values());
  }

  /** A watch of one resource (non-empty {@code resource}) or of a prefix (empty: every one). */
  void addWatch(String resource, String prefix, Receiver receiver) {
    if (!resource.isEmpty()) {
      byResource.computeIfAbsent(resource, r -> new CopyOnWriteArrayList<>()).add(receiver);
    } else {
      byPrefix.add(new PrefixWatch(prefix, receiver));
    }
  }

  void removeWatch(String resource, String prefix, Receiver receiver) {
    if (!resource.isEmpty()) {
      byResource.computeIfPresent(
          resource,
          (r, list) -> {
            list.remove(receiver);
            return list.isEmpty() ? null : list;
          });
    } else {
      byPrefix.remove(new PrefixWatch(prefix, receiver));
    }
  }

  /**
   * {@code receiver} hears of the grant to the queued acquire {@code requestId} on {@code
   * resource}.
   */
  void addWaiter(String resource, String requestId, GrantReceiver receiver) {
    waiters.put(new WaiterKey(resource, requestId), receiver);
  }

  void removeWaiter(String resource, String requestId, GrantReceiver receiver) {
    waiters.remove(new WaiterKey(resource, requestId), receiver);
  }

  @Override
  public void onApplied(long index, List<LeaseEvent> events) {
    if (events.isEmpty()) {
      return;
    }
    if (!sessions.isEmpty()) {
      forSessions(index, events);
    }
    if (!byResource.isEmpty() || !byPrefix.isEmpty()) {
      forWatches(index, events);
    }
    if (!waiters.isEmpty()) {
      for (LeaseEvent e : events) {
        if (e.getType() == LeaseEvent.Type.ACQUIRED && !e.getRequestId().isEmpty()) {
          GrantReceiver waiter = waiters.get(new WaiterKey(e.getResource(), e.getRequestId()));
          if (waiter != null) {
            waiter.onGranted(e);
          }
        }
      }
    }
  }

  private void forSessions(long index, List<LeaseEvent> events) {
    if (events.size() == 1) {
      Receiver r = sessions.get(events.get(0).getSessionId());
      if (r != null) {
        r.onEvents(index, events);
      }
      return;
    }
    Map<Receiver, List<LeaseEvent>> grouped = new java.util.LinkedHashMap<>();
    for (LeaseEvent e : events) {
      if (!e.getSessionId().isEmpty()) {
        Receiver r = sessions.get(e.getSessionId());
        if (r != null) {
          grouped.computeIfAbsent(r, k -> new java.util.ArrayList<>()).add(e);
        }
      }
    }
    grouped.forEach((r, list) -> r.onEvents(index, list));
  }

  private void forWatches(long index, List<LeaseEvent> events) {
    Map<Receiver, List<LeaseEvent>> grouped = new java.util.LinkedHashMap<>();
    for (LeaseEvent e : events) {
      List<Receiver> exact = byResource.get(e.getResource());
      if (exact != null) {
        for (Receiver r : exact) {
          grouped.computeIfAbsent(r, k -> new java.util.ArrayList<>()).add(e);
        }
      }
      for (PrefixWatch w : byPrefix) {
        if (e.getResource().startsWith(w.prefix())) {
          grouped.computeIfAbsent(w.receiver(), k -> new java.util.ArrayList<>()).add(e);
        }
      }
    }
    grouped.forEach((r, list) -> r.onEvents(index, list));
  }

  @Override
  public void onReset(long index) {
    for (Receiver r : sessions.values()) {
      r.onGap(index);
    }
    for (List<Receiver> list : byResource.values()) {
      for (Receiver r : list) {
        r.onGap(index);
      }
    }
    for (PrefixWatch w : byPrefix) {
      w.receiver().onGap(index);
    }
  }
}
