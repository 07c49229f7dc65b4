package dev.fencekeeper.client.fakenode;

import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.KeepAliveAnswer;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListEntry;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.SessionKeepAlive;
import dev.fencekeeper.proto.SessionOpened;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.proto.ValidateRequest;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.proto.WriteRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;

/**
 * The replicated state a real cluster keeps, kept in memory for the client's own tests: a lock
 * table (tokens only ever increase, each lease ends by its TTL on this cluster's clock), the keys
 * fenced writes change, the FIFO line of waiting acquires, the event log every lease's end is
 * written to, and the streams (sessions, watches) those events go to. One or more {@link FakeNode}s
 * serve it, as the nodes of one cluster serve one log.
 *
 * <p>Its clock is real time plus an offset a test may {@link #advance}, so a test can end leases on
 * the cluster without waiting their TTL out. Every method is synchronized, and every message to a
 * stream is sent while holding the lock, so each stream sees its messages one at a time and in log
 * order.
 */
public final class FakeCluster implements AutoCloseable {
  private static final long BASE_MS = System.currentTimeMillis();
  private static final long BASE_NANOS = System.nanoTime();

  /** A lease on the cluster: live until {@code expiresAtMs} unless it ends earlier. */
  private static final class Held {
    final long token;
    final String owner;
    final long ttlMs;
    final String sessionId;
    final String requestId;
    final long lockDelayMs;
    long expiresAtMs;

    Held(
        long token,
        String owner,
        long ttlMs,
        long expiresAtMs,
        String sessionId,
        String requestId,
        long lockDelayMs) {
      this.token = token;
      this.owner = owner;
      this.ttlMs = ttlMs;
      this.expiresAtMs = expiresAtMs;
      this.sessionId = sessionId;
      this.requestId = requestId;
      this.lockDelayMs = lockDelayMs;
    }
  }

  /** A queued acquire; {@code call} is the Acquire call held open for it, if it waits on one. */
  private record Waiter(AcquireRequest request, long untilMs, StreamObserver<Response> call) {}

  private record Value(ByteString bytes, long acceptedToken, long version, long writtenAtMs) {}

  private static final class Resource {
    Held live;
    long currentToken;
    long delayedUntilMs;
    final Deque<Waiter> waiters = new ArrayDeque<>();
    final Map<String, Value> values = new TreeMap<>();
  }

  private record Watcher(WatchRequest request, StreamObserver<Response> out) {
    boolean matches(LeaseEvent e) {
      return request.getResource().isEmpty()
          ? e.getResource().startsWith(request.getPrefix())
          : e.getResource().equals(request.getResource());
    }
  }

  private final Map<String, Resource> resources = new TreeMap<>();
  private final List<LeaseEvent> events = new ArrayList<>();
  // Request id of every grant -> its token: a retried acquire gets the same lease back.
  private final Map<String, Long> grants = new HashMap<>();
  private final Map<String, StreamObserver<SessionResponse>> sessions = new HashMap<>();
  private final List<Watcher> watchers = new ArrayList<>();
  private final Set<Long> expiredByTtl = new HashSet<>();
  private final ScheduledExecutorService ticker;
  private long nextToken = 100;
  private long appliedIndex = 50;
  private long offsetMs;

  public FakeCluster() {
    ticker =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "fake-cluster-ticker");
              t.setDaemon(true);
              return t;
            });
    ticker.scheduleWithFixedDelay(this::tick, 5, 5, TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    ticker.shutdownNow();
  }

  // -----------------------------------------------------------------------------------------------
  // What a test sets and asks.

  /** This cluster's time: real time, plus whatever {@link #advance} added. */
  public synchronized long nowMs() {
    return BASE_MS + (System.nanoTime() - BASE_NANOS) / 1_000_000 + offsetMs;
  }

  /** Moves this cluster's clock forward: leases whose TTL runs out meanwhile expire now. */
  public void advance(java.time.Duration by) {
    synchronized (this) {
      offsetMs += by.toMillis();
    }
    tick();
  }

  /** The token of {@code resource}'s live lease, 0 when none. */
  public synchronized long liveToken(String resource) {
    Resource r = resources.get(resource);
    return r == null || r.live == null ? 0 : r.live.token;
  }

  /** The cluster's deadline of {@code resource}'s live lease, 0 when none. */
  public synchronized long expiresAtMs(String resource) {
    Resource r = resources.get(resource);
    return r == null || r.live == null ? 0 : r.live.expiresAtMs;
  }

  /** True once lease {@code token} ran out its TTL on this cluster (not released or revoked). */
  public synchronized boolean expiredByTtl(long token) {
    return expiredByTtl.contains(token);
  }

  /** Acquires in line for {@code resource}. */
  public synchronized int waiters(String resource) {
    Resource r = resources.get(resource);
    return r == null ? 0 : r.waiters.size();
  }

  /** Every lease event so far, in log order. */
  public synchronized List<LeaseEvent> events() {
    return List.copyOf(events);
  }

  /**
   * Grants {@code resource} to a holder outside any client under test, as another process would.
   */
  public synchronized long grantToOther(String resource, java.time.Duration ttl) {
    return grant(
            resource(resource),
            AcquireRequest.newBuilder()
                .setResource(resource)
                .setOwner("someone-else")
                .setTtlMs(ttl.toMillis())
                .setRequestId("other-" + (nextToken + 1))
                .build(),
            nowMs())
        .token;
  }

  /** Ends {@code resource}'s live lease as an operator's revoke does. */
  public synchronized void revoke(String resource) {
    Resource r = resources.get(resource);
    if (r != null && r.live != null) {
      end(resource, r, LeaseEvent.Type.REVOKED, nowMs());
    }
  }

  /** Ends {@code resource}'s live lease as its holder's release does. */
  public synchronized void release(String resource) {
    Resource r = resources.get(resource);
    if (r != null && r.live != null) {
      end(resource, r, LeaseEvent.Type.RELEASED, nowMs());
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Time.

  /** Ends the leases whose TTL ran out, drops the waits that ended, and grants the next waiters. */
  private synchronized void tick() {
    long now = nowMs();
    for (Map.Entry<String, Resource> e : resources.entrySet()) {
      Resource r = e.getValue();
      // Strictly past: this clock counts whole milliseconds, so a lease renewed within the
      // millisecond of `now` may have less than a millisecond more in real time, never less.
      if (r.live != null && r.live.expiresAtMs < now) {
        expiredByTtl.add(r.live.token);
        end(e.getKey(), r, LeaseEvent.Type.EXPIRED, now);
      }
      for (Iterator<Waiter> it = r.waiters.iterator(); it.hasNext(); ) {
        Waiter w = it.next();
        if (w.untilMs() <= now) {
          it.remove();
          if (w.call() != null) {
            answer(w.call(), refusal(e.getKey(), r, now));
          }
        }
      }
      grantWaiters(e.getKey(), r, now);
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Commands, as the leader applies them.

  private Resource resource(String name) {
    return resources.computeIfAbsent(name, n -> new Resource());
  }

  private long nextIndex() {
    return ++appliedIndex;
  }

  synchronized long appliedIndex() {
    return appliedIndex;
  }

  /**
   * An acquire; with {@code call} (an Acquire call with a wait) a queued acquire is held on it and
   * answered when granted or when its wait ends, and null is returned; without, a queued acquire is
   * answered WAITING at once and stays queued until its wait ends (re-sent to stay in line).
   */
  synchronized Response acquire(AcquireRequest a, StreamObserver<Response> call) {
    long now = nowMs();
    if (a.getResource().isEmpty() || a.getTtlMs() <= 0) {
      return invalid("resource must be named and ttl_ms positive");
    }
    Resource r = resource(a.getResource());
    Long granted = a.getRequestId().isEmpty() ? null : grants.get(a.getRequestId());
    if (granted != null) {
      // A retry of an acquire that was granted: the same lease, live or not.
      boolean live = r.live != null && r.live.token == granted;
      return Response.newBuilder()
          .setCode(ResultCode.GRANTED)
          .setToken(granted)
          .setCurrentToken(r.currentToken)
          .setLive(live)
          .setTtlMs(a.getTtlMs())
          .setExpiresAtMs(live ? r.live.expiresAtMs : 0)
          .setNowMs(now)
          .build();
    }
    boolean queuedAlready = false;
    for (Waiter w : r.waiters) {
      queuedAlready |= w.request().getRequestId().equals(a.getRequestId());
    }
    if (r.live == null && r.delayedUntilMs <= now && (r.waiters.isEmpty() || queuedAlready)) {
      r.waiters.removeIf(w -> w.request().getRequestId().equals(a.getRequestId()));
      return granted(r, grant(r, a, now), now);
    }
    if (a.getWaitMs() <= 0) {
      return refusal(a.getResource(), r, now);
    }
    Waiter waiter = new Waiter(a, now + a.getWaitMs(), call);
    int position = 0;
    boolean replaced = false;
    List<Waiter> line = new ArrayList<>(r.waiters);
    for (int i = 0; i < line.size(); i++) {
      if (line.get(i).request().getRequestId().equals(a.getRequestId())) {
        line.set(i, waiter); // re-sent: keeps its place, its wait counted from now
        position = i + 1;
        replaced = true;
      }
    }
    if (!replaced) {
      line.add(waiter);
      position = line.size();
    }
    r.waiters.clear();
    r.waiters.addAll(line);
    if (call != null) {
      return null;
    }
    return Response.newBuilder()
        .setCode(ResultCode.WAITING)
        .setPosition(position)
        .setAppliedIndex(appliedIndex)
        .setToken(r.live == null ? 0 : r.live.token)
        .setCurrentToken(r.currentToken)
        .setNowMs(now)
        .setMessage("queued behind the holder")
        .build();
  }

  /** The Acquire call held for a queued acquire was cancelled by its caller: it leaves the line. */
  synchronized void acquireCallCancelled(StreamObserver<Response> call) {
    for (Resource r : resources.values()) {
      r.waiters.removeIf(w -> w.call() == call);
    }
  }

  private Held grant(Resource r, AcquireRequest a, long now) {
    long token = ++nextToken;
    Held h =
        new Held(
            token,
            a.getOwner(),
            a.getTtlMs(),
            now + a.getTtlMs(),
            a.getSessionId(),
            a.getRequestId(),
            a.getLockDelayMs());
    r.live = h;
    r.currentToken = token;
    if (!a.getRequestId().isEmpty()) {
      grants.put(a.getRequestId(), token);
    }
    publish(event(LeaseEvent.Type.ACQUIRED, a.getResource(), h, now));
    return h;
  }

  private static Response granted(Resource r, Held h, long now) {
    return Response.newBuilder()
        .setCode(ResultCode.GRANTED)
        .setToken(h.token)
        .setCurrentToken(r.currentToken)
        .setHolderOwner(h.owner)
        .setExpiresAtMs(h.expiresAtMs)
        .setTtlMs(h.ttlMs)
        .setLive(true)
        .setNowMs(now)
        .build();
  }

  /** HELD, or LOCK_DELAYED while a lock-delay runs on a free resource. */
  private static Response refusal(String resource, Resource r, long now) {
    if (r.live == null && r.delayedUntilMs > now) {
      return Response.newBuilder()
          .setCode(ResultCode.LOCK_DELAYED)
          .setExpiresAtMs(r.delayedUntilMs)
          .setCurrentToken(r.currentToken)
          .setNowMs(now)
          .setMessage(resource + " is free, but its lock-delay runs")
          .build();
    }
    Response.Builder b =
        Response.newBuilder()
            .setCode(ResultCode.HELD)
            .setCurrentToken(r.currentToken)
            .setNowMs(now)
            .setMessage(resource + " is held");
    if (r.live != null) {
      b.setToken(r.live.token).setHolderOwner(r.live.owner).setExpiresAtMs(r.live.expiresAtMs);
    }
    return b.build();
  }

  private void grantWaiters(String name, Resource r, long now) {
    while (r.live == null && r.delayedUntilMs <= now && !r.waiters.isEmpty()) {
      Waiter w = r.waiters.poll();
      if (w.untilMs() <= now) {
        continue;
      }
      Held h = grant(r, w.request(), now);
      if (w.call() != null) {
        answer(w.call(), granted(r, h, now));
      }
    }
  }

  /** Ends {@code r}'s live lease with an event of {@code type}, then serves the line. */
  private void end(String name, Resource r, LeaseEvent.Type type, long now) {
    Held h = r.live;
    r.live = null;
    if (type != LeaseEvent.Type.RELEASED && h.lockDelayMs > 0) {
      r.delayedUntilMs = now + h.lockDelayMs;
    }
    publish(event(type, name, h, now));
    grantWaiters(name, r, now);
  }

  private LeaseEvent event(LeaseEvent.Type type, String resource, Held h, long now) {
    return LeaseEvent.newBuilder()
        .setIndex(nextIndex())
        .setSeq(0)
        .setType(type)
        .setResource(resource)
        .setToken(h.token)
        .setOwner(h.owner)
        .setExpiresAtMs(h.expiresAtMs)
        .setAtMs(now)
        .setRequestId(type == LeaseEvent.Type.ACQUIRED ? h.requestId : "")
        .setSessionId(h.sessionId)
        .build();
  }

  /** Logs {@code e} and sends it to its lease's session and to every watch it matches. */
  private void publish(LeaseEvent e) {
    events.add(e);
    StreamObserver<SessionResponse> session =
        e.getSessionId().isEmpty() ? null : sessions.get(e.getSessionId());
    if (session != null) {
      send(session, SessionResponse.newBuilder().setEvent(e).build());
    }
    for (Watcher w : watchers) {
      if (w.matches(e)) {
        send(
            w.out(),
            Response.newBuilder()
                .setCode(ResultCode.FOUND)
                .addEvents(e)
                .setAppliedIndex(e.getIndex())
                .build());
      }
    }
  }

  synchronized Response cancelWait(CancelWaitRequest c) {
    Resource r = resources.get(c.getResource());
    if (r == null) {
      return Response.newBuilder()
          .setCode(ResultCode.NOT_FOUND)
          .setMessage("no such waiter")
          .build();
    }
    for (Iterator<Waiter> it = r.waiters.iterator(); it.hasNext(); ) {
      Waiter w = it.next();
      if (w.request().getRequestId().equals(c.getRequestId())) {
        it.remove();
        if (w.call() != null) {
          answer(w.call(), refusal(c.getResource(), r, nowMs()));
        }
        return Response.newBuilder()
            .setCode(ResultCode.ACCEPTED)
            .setMessage("no longer waiting")
            .build();
      }
    }
    Long granted = grants.get(c.getRequestId());
    if (granted != null && r.live != null && r.live.token == granted) {
      end(c.getResource(), r, LeaseEvent.Type.RELEASED, nowMs());
      return Response.newBuilder().setCode(ResultCode.RELEASED).setToken(granted).build();
    }
    return Response.newBuilder().setCode(ResultCode.NOT_FOUND).setMessage("no such waiter").build();
  }

  synchronized Response renew(RenewRequest q) {
    long now = nowMs();
    Resource r = resources.get(q.getResource());
    if (r == null || r.live == null || r.live.token != q.getToken()) {
      return Response.newBuilder()
          .setCode(ResultCode.LEASE_LOST)
          .setCurrentToken(r == null ? 0 : r.currentToken)
          .setSentToken(q.getToken())
          .setNowMs(now)
          .setMessage("token " + q.getToken() + " is not the live lease")
          .build();
    }
    long ttl = q.getTtlMs() > 0 ? q.getTtlMs() : r.live.ttlMs;
    r.live.expiresAtMs = now + ttl;
    publish(event(LeaseEvent.Type.RENEWED, q.getResource(), r.live, now));
    return Response.newBuilder()
        .setCode(ResultCode.RENEWED)
        .setToken(r.live.token)
        .setCurrentToken(r.currentToken)
        .setExpiresAtMs(r.live.expiresAtMs)
        .setTtlMs(ttl)
        .setNowMs(now)
        .build();
  }

  synchronized Response release(ReleaseRequest q) {
    long now = nowMs();
    Resource r = resources.get(q.getResource());
    if (r != null && r.live != null && r.live.token == q.getToken()) {
      end(q.getResource(), r, LeaseEvent.Type.RELEASED, now);
      return Response.newBuilder().setCode(ResultCode.RELEASED).setToken(q.getToken()).build();
    }
    if (r != null && q.getToken() > 0 && q.getToken() <= r.currentToken) {
      return Response.newBuilder()
          .setCode(ResultCode.RELEASED)
          .setToken(q.getToken())
          .setAlreadyEnded(true)
          .build();
    }
    return Response.newBuilder()
        .setCode(ResultCode.NOT_HOLDER)
        .setSentToken(q.getToken())
        .setMessage("token " + q.getToken() + " was never issued for " + q.getResource())
        .build();
  }

  synchronized Response revoke(RevokeRequest q) {
    Resource r = resources.get(q.getResource());
    if (r == null || r.live == null) {
      return Response.newBuilder()
          .setCode(ResultCode.NOT_FOUND)
          .setMessage("no live lease")
          .build();
    }
    long token = r.live.token;
    end(q.getResource(), r, LeaseEvent.Type.REVOKED, nowMs());
    return Response.newBuilder().setCode(ResultCode.REVOKED).setToken(token).build();
  }

  synchronized Response write(WriteRequest q) {
    long now = nowMs();
    Resource r = resources.get(q.getResource());
    long current = r == null ? 0 : r.currentToken;
    Response.Builder refused = Response.newBuilder().setSentToken(q.getToken()).setNowMs(now);
    if (r == null || q.getToken() > current || q.getToken() <= 0) {
      return refused
          .setCode(ResultCode.UNKNOWN_TOKEN)
          .setMessage("token " + q.getToken() + " was never issued for " + q.getResource())
          .build();
    }
    if (q.getToken() < current) {
      return refused.setCode(ResultCode.STALE_TOKEN).setCurrentToken(current).build();
    }
    if (r.live == null) {
      return refused
          .setCode(ResultCode.LEASE_EXPIRED)
          .setCurrentToken(current)
          .setMessage("the lease of token " + q.getToken() + " has ended")
          .build();
    }
    nextIndex();
    Value first = null;
    for (KeyWrite w : q.getWritesList()) {
      Value before = r.values.get(w.getKey());
      Value after =
          new Value(w.getValue(), q.getToken(), before == null ? 1 : before.version() + 1, now);
      if (w.getDelete()) {
        r.values.remove(w.getKey());
      } else {
        r.values.put(w.getKey(), after);
      }
      first = first == null ? after : first;
    }
    return Response.newBuilder()
        .setCode(ResultCode.ACCEPTED)
        .setAcceptedToken(q.getToken())
        .setVersion(first == null ? 0 : first.version())
        .setNowMs(now)
        .build();
  }

  synchronized Response read(ReadRequest q) {
    Resource r = resources.get(q.getResource());
    Value v = r == null ? null : r.values.get(q.getKey());
    if (v == null) {
      return Response.newBuilder().setCode(ResultCode.NOT_FOUND).setNowMs(nowMs()).build();
    }
    return Response.newBuilder()
        .setCode(ResultCode.FOUND)
        .setValue(v.bytes())
        .setAcceptedToken(v.acceptedToken())
        .setVersion(v.version())
        .setWrittenAtMs(v.writtenAtMs())
        .setNowMs(nowMs())
        .build();
  }

  synchronized Response validate(ValidateRequest q) {
    Resource r = resources.get(q.getResource());
    ResultCode code =
        r == null || q.getToken() > r.currentToken || q.getToken() <= 0
            ? ResultCode.UNKNOWN_TOKEN
            : q.getToken() < r.currentToken
                ? ResultCode.STALE
                : r.live != null ? ResultCode.CURRENT : ResultCode.EXPIRED;
    return Response.newBuilder()
        .setCode(code)
        .setCurrentToken(r == null ? 0 : r.currentToken)
        .setNowMs(nowMs())
        .build();
  }

  synchronized Response lease(LeaseQuery q) {
    Resource r = resources.get(q.getResource());
    if (r == null || r.currentToken == 0) {
      return Response.newBuilder().setCode(ResultCode.NOT_FOUND).setNowMs(nowMs()).build();
    }
    Response.Builder b =
        Response.newBuilder()
            .setCode(ResultCode.FOUND)
            .setCurrentToken(r.currentToken)
            .setLive(r.live != null)
            .setNowMs(nowMs());
    if (r.live != null) {
      b.setToken(r.live.token)
          .setHolderOwner(r.live.owner)
          .setExpiresAtMs(r.live.expiresAtMs)
          .setTtlMs(r.live.ttlMs);
    }
    return b.build();
  }

  synchronized Response list(ListRequest q) {
    int limit = q.getLimit() <= 0 ? 100 : Math.min(q.getLimit(), 1000);
    Response.Builder b = Response.newBuilder().setCode(ResultCode.FOUND).setNowMs(nowMs());
    if (q.getWhat() == ListRequest.What.KEYS) {
      Resource r = resources.get(q.getResource());
      if (r != null) {
        for (Map.Entry<String, Value> e : r.values.entrySet()) {
          if (e.getKey().startsWith(q.getPrefix()) && e.getKey().compareTo(q.getAfter()) > 0) {
            if (b.getEntriesCount() == limit) {
              return b.setMore(true).build();
            }
            b.addEntries(
                ListEntry.newBuilder()
                    .setResource(q.getResource())
                    .setKey(e.getKey())
                    .setAcceptedToken(e.getValue().acceptedToken())
                    .setVersion(e.getValue().version())
                    .setValueBytes(e.getValue().bytes().size())
                    .setWrittenAtMs(e.getValue().writtenAtMs()));
          }
        }
      }
      return b.build();
    }
    for (Map.Entry<String, Resource> e : resources.entrySet()) {
      Resource r = e.getValue();
      if (r.currentToken == 0
          || !e.getKey().startsWith(q.getPrefix())
          || e.getKey().compareTo(q.getAfter()) <= 0) {
        continue;
      }
      if (b.getEntriesCount() == limit) {
        return b.setMore(true).build();
      }
      ListEntry.Builder entry =
          ListEntry.newBuilder()
              .setResource(e.getKey())
              .setCurrentToken(r.currentToken)
              .setLive(r.live != null)
              .setWaiters(r.waiters.size());
      if (r.live != null) {
        entry.setToken(r.live.token).setOwner(r.live.owner).setExpiresAtMs(r.live.expiresAtMs);
      }
      b.addEntries(entry);
    }
    return b.build();
  }

  // -----------------------------------------------------------------------------------------------
  // Streams.

  /** A session stream opened with {@code sessionId}: answered opened, then sent what it missed. */
  synchronized void sessionOpened(
      String sessionId, long afterIndex, int afterSeq, StreamObserver<SessionResponse> out) {
    StreamObserver<SessionResponse> before = sessions.put(sessionId, out);
    if (before != null && before != out) {
      send(
          before,
          SessionResponse.newBuilder()
              .setError(
                  Response.newBuilder()
                      .setCode(ResultCode.INVALID_ARGUMENT)
                      .setMessage("the session was re-opened on another stream"))
              .build());
      complete(before);
    }
    send(
        out,
        SessionResponse.newBuilder()
            .setOpened(
                SessionOpened.newBuilder().setSessionId(sessionId).setAppliedIndex(appliedIndex))
            .build());
    if (afterIndex > 0) {
      for (LeaseEvent e : events) {
        if (e.getSessionId().equals(sessionId)
            && (e.getIndex() > afterIndex
                || (e.getIndex() == afterIndex && e.getSeq() > afterSeq))) {
          send(out, SessionResponse.newBuilder().setEvent(e).build());
        }
      }
    }
  }

  /** A keep-alive of {@code sessionId}: renews each of its live leases but the excepted ones. */
  synchronized void keepAlive(
      String sessionId, SessionKeepAlive k, StreamObserver<SessionResponse> out) {
    if (sessions.get(sessionId) != out) {
      return;
    }
    long now = nowMs();
    Set<Long> except = new HashSet<>(k.getExceptTokensList());
    int renewed = 0;
    for (Resource r : resources.values()) {
      if (r.live != null && r.live.sessionId.equals(sessionId) && !except.contains(r.live.token)) {
        r.live.expiresAtMs = now + r.live.ttlMs;
        renewed++;
      }
    }
    send(
        out,
        SessionResponse.newBuilder()
            .setKeepAlive(
                KeepAliveAnswer.newBuilder()
                    .setSeq(k.getSeq())
                    .setCode(ResultCode.RENEWED)
                    .setRenewed(renewed)
                    .setAppliedIndex(nextIndex())
                    .setNowMs(now))
            .build());
  }

  /** Session stream {@code out} ended: the session stays, without a stream until re-opened. */
  synchronized void sessionEnded(StreamObserver<SessionResponse> out) {
    sessions.values().removeIf(s -> s == out);
  }

  /** Replays the events after the watch's position, then sends each new one as it is logged. */
  synchronized void watch(WatchRequest q, StreamObserver<Response> out) {
    Watcher w = new Watcher(q, out);
    for (LeaseEvent e : events) {
      if (w.matches(e)
          && (e.getIndex() > q.getAfterIndex()
              || (e.getIndex() == q.getAfterIndex() && e.getSeq() > q.getAfterSeq()))) {
        send(
            out,
            Response.newBuilder()
                .setCode(ResultCode.FOUND)
                .addEvents(e)
                .setAppliedIndex(e.getIndex())
                .build());
      }
    }
    watchers.add(w);
    if (q.getTimeoutMs() > 0) {
      ticker.schedule(() -> endWatch(out), q.getTimeoutMs(), TimeUnit.MILLISECONDS);
    }
  }

  synchronized void endWatch(StreamObserver<Response> out) {
    if (watchers.removeIf(w -> w.out() == out)) {
      complete(out);
    }
  }

  synchronized void watchCancelled(StreamObserver<Response> out) {
    watchers.removeIf(w -> w.out() == out);
  }

  // -----------------------------------------------------------------------------------------------
  // Sending, always under this lock.

  synchronized void answer(StreamObserver<Response> call, Response response) {
    send(call, response);
    complete(call);
  }

  synchronized <T> void send(StreamObserver<T> out, T message) {
    try {
      out.onNext(message);
    } catch (RuntimeException e) {
      // The call was cancelled or the node stopped: nobody reads it any more.
    }
  }

  synchronized void complete(StreamObserver<?> out) {
    try {
      out.onCompleted();
    } catch (RuntimeException e) {
      // As above.
    }
  }

  synchronized void fail(StreamObserver<?> out, Throwable error) {
    try {
      out.onError(error);
    } catch (RuntimeException e) {
      // As above.
    }
  }

  static Response invalid(String why) {
    return Response.newBuilder()
        .setCode(ResultCode.INVALID_ARGUMENT)
        .setMessage(why + "; nothing changed")
        .build();
  }
}
