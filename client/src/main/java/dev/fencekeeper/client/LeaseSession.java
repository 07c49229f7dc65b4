package dev.fencekeeper.client;

import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.SessionKeepAlive;
import dev.fencekeeper.proto.SessionOpen;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCallStreamObserver;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientResponseObserver;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's one session stream to the leader (docs/protocol.md, Sessions). Every lease a {@link
 * FencingClient} hands out was acquired with this session's id, so one keep-alive renews all of
 * them with one log entry, each by its own TTL; the ends of those leases come back on the stream as
 * they commit. The stream is opened when the first acquire is sent (a client that never acquires
 * opens none), and a broken one (leader change, node stop, network) is re-opened with the same id
 * from the last event seen, so no end of a lease goes unnoticed and leases still live on the
 * cluster stay held.
 *
 * <p>A lease's local deadline moves only on a keep-alive answered RENEWED, to the time the
 * keep-alive was <em>sent</em> plus the lease's TTL, and only for leases whose grant was answered
 * before that send: the node logs the renewal after the grant, so the cluster's deadline is later.
 * A lease the client stops holding without the cluster ending it (abandoned, past its local
 * deadline, a release not yet answered) is listed in every keep-alive's {@code except_tokens} until
 * its end event arrives, so the session never keeps alive a lease nobody holds.
 */
final class LeaseSession {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseSession.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int MAX_EXCEPT_TOKENS = 10_000;
  private static final long MIN_INTERVAL_MS = 20;
  // The longest pause between attempts to re-open the stream while its leases can still be saved.
  private static final long PROMPT_RETRY_MS = 100;
  private static final long MIN_OPEN_TIMEOUT_MS = 1000;
  // Long enough for the other nodes to elect a new leader and stop naming the dead one.
  private static final long REFUSED_AVOID_MS = 2000;

  private record Key(String resource, long token) {}

  private record Excepted(String resource, long untilNanos) {}

  private final LeaseCalls client;
  private final ClientPortTransport port;
  private final String owner;
  private final String id;
  // Everything below is guarded by this.
  private final Map<Key, Lease> leases = new HashMap<>();
  private final Map<Long, Excepted> except = new HashMap<>();
  private final Map<Long, Long> pending = new HashMap<>(); // keep-alive seq -> sent nanos
  private StreamObserver<SessionRequest> stream; // open, answered `opened`
  private StreamObserver<SessionRequest> opening; // sent `open`, no answer yet
  private String address;
  private long positionIndex;
  private int positionSeq;
  private long seq;
  private ScheduledFuture<?> tick;
  private long tickIntervalMs;
  private ScheduledFuture<?> openTimeout;
  private int openFailures;
  // When a stream was last open or answered: how long the cluster has been out of reach.
  private long lastUpNanos = System.nanoTime();
  private boolean verifying;
  private boolean closed;
  // The stream being opened was refused by a node that named another as leader: re-open there now.
  private boolean redirectedNow;
  private int immediateRedirects; // in a row, since a stream last opened
  // A stream is being opened ahead of a grant (openAhead): wanted although no lease is held yet.
  private boolean ahead;
  // The node that last refused a connection (its process is gone, as a killed leader's), and when:
  // not dialled again, even when another node still names it as leader, until a stream opens or
  // REFUSED_AVOID_MS pass.
  private String refused;
  private long refusedNanos;

  LeaseSession(LeaseCalls client, ClientPortTransport port, String owner) {
    this.client = client;
    this.port = port;
    this.owner = owner;
    byte[] bits = new byte[18];
    RANDOM.nextBytes(bits);
    this.id = Base64.getUrlEncoder().withoutPadding().encodeToString(bits);
  }

  /** The id every lease of this client is acquired with. */
  String id() {
    return id;
  }

  /**
   * An acquire is about to be sent: opens the stream now if it is not open, once, so that it is
   * open by the time the grant is answered. Opened only then, the lease's first renewal would wait
   * for the open's round trip after the grant's, which a cold client on a loaded machine may not
   * fit into a short TTL. A stream opened ahead that ends while no lease is held is not re-opened.
   */
  void openAhead() {
    synchronized (this) {
      if (closed || stream != null || opening != null || !leases.isEmpty()) {
        return;
      }
      ahead = true;
      openIfNeeded();
    }
  }

  /** Keeps {@code lease} alive from now on; opens the stream if it is not open. */
  void add(Lease lease) {
    boolean renewNow;
    synchronized (this) {
      if (closed) {
        return;
      }
      leases.put(new Key(lease.resource(), lease.token()), lease);
      openIfNeeded();
      scheduleTick();
      // Little of the TTL is certain (a grant after a long wait): renew at once.
      renewNow = stream != null && lease.remaining().toNanos() < lease.ttl().toNanos() / 2;
    }
    if (renewNow) {
      keepAlive();
    }
  }

  /**
   * {@code lease} is no longer held; unless {@code endedOnCluster}, the session leaves it out of
   * its keep-alives until its end event arrives.
   */
  void remove(Lease lease, boolean endedOnCluster) {
    synchronized (this) {
      Key key = new Key(lease.resource(), lease.token());
      if (leases.remove(key) == null || endedOnCluster) {
        return;
      }
      if (except.size() < MAX_EXCEPT_TOKENS) {
        // Once its TTL has run out twice over, it has expired on the cluster (a takeover grace
        // included) whether or not the event reached this client.
        except.put(
            lease.token(),
            new Excepted(
                lease.resource(),
                System.nanoTime() + 2 * lease.ttl().toNanos() + TimeUnit.SECONDS.toNanos(30)));
      } else {
        LOG.warn(
            "{} leases left out of the session already; lease on {} (token {}) may be renewed"
                + " until the session ends",
            MAX_EXCEPT_TOKENS,
            lease.resource(),
            lease.token());
      }
    }
  }

  void close() {
    StreamObserver<SessionRequest> s;
    StreamObserver<SessionRequest> o;
    synchronized (this) {
      closed = true;
      cancel(tick);
      cancel(openTimeout);
      s = stream;
      o = opening;
      stream = null;
      opening = null;
      leases.clear();
    }
    complete(s);
    complete(o);
  }

  private static void complete(StreamObserver<SessionRequest> stream) {
    if (stream != null) {
      try {
        stream.onCompleted();
      } catch (RuntimeException e) {
        LOG.debug("Closing the session stream failed", e);
      }
    }
  }

  private static void cancel(ScheduledFuture<?> f) {
    if (f != null) {
      f.cancel(false);
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Opening.

  /** Starts opening the stream when leases need it and none is open or opening. */
  private void openIfNeeded() {
    if (closed || stream != null || opening != null || (leases.isEmpty() && !ahead)) {
      return;
    }
    if (openFailures == 0) {
      // A stream is needed from now on (the first lease, or one that broke): the cluster is out of
      // reach only when none opens for the unreachable timeout from here.
      lastUpNanos = System.nanoTime();
    }
    String at = avoidingRefused() ? port.targetOtherThan(refused) : port.target();
    LOG.debug("Opening session {} of {} at {}", id, owner, at);
    Handler handler = new Handler(at);
    StreamObserver<SessionRequest> requests;
    try {
      requests = port.openSession(at, handler);
      requests.onNext(
          SessionRequest.newBuilder()
              .setOpen(
                  SessionOpen.newBuilder()
                      .setSessionId(id)
                      .setOwner(owner)
                      .setAfterIndex(positionIndex)
                      .setAfterSeq(positionSeq))
              .build());
    } catch (RuntimeException e) {
      LOG.debug("Opening the session at {} failed: {}", at, e.toString());
      retryOpenLater();
      return;
    }
    opening = requests;
    address = at;
    openTimeout =
        client
            .calls()
            .scheduler()
            .schedule(() -> openTimedOut(requests), openTimeoutMs(), TimeUnit.MILLISECONDS);
    if (!leases.isEmpty()) {
      // Right behind the open, not after its answer: the node renews once the session is open
      // there, so a failover costs the leases one round trip less.
      sendKeepAlive(requests);
    }
  }

  /**
   * Whether a node refused a connection recently and no stream has opened since; guarded by this.
   */
  private boolean avoidingRefused() {
    if (refused != null
        && System.nanoTime() - refusedNanos >= TimeUnit.MILLISECONDS.toNanos(REFUSED_AVOID_MS)) {
      refused = null;
    }
    return refused != null;
  }

  private void openTimedOut(StreamObserver<SessionRequest> requests) {
    synchronized (this) {
      if (opening != requests) {
        return;
      }
    }
    LOG.debug("{} did not open the session within {} ms", address, openTimeoutMs());
    port.failed(address);
    ended(requests, true);
  }

  private void retryOpenLater() {
    openFailures++;
    if (System.nanoTime() - lastUpNanos >= client.calls().unreachableTimeout().toNanos()) {
      client.calls().sessionReachable(false);
    }
    // A lease renewed every third of its TTL has two thirds left when its leader dies, and every
    // pause after the new leader is ready comes out of them. So while the cluster has been out of
    // reach for less than the shortest TTL held (the leases can still be saved) a pause is at most
    // PROMPT_RETRY_MS: a new leader is elected within a second and ready one entry later. Past that
    // it backs off to a second at most, and to a tenth of the shortest TTL held.
    long backOffMs = Math.min(50L << Math.min(openFailures - 1, 4), 1000);
    long outageNanos = System.nanoTime() - lastUpNanos;
    long pauseMs =
        outageNanos < shortestTtlNanos()
            ? Math.min(backOffMs, PROMPT_RETRY_MS)
            : Math.min(backOffMs, pauseCapMs());
    client
        .calls()
        .later(
            () -> {
              synchronized (this) {
                openIfNeeded();
              }
            },
            pauseMs,
            TimeUnit.MILLISECONDS);
  }

  /**
   * How long an open may go unanswered before it is given up: the request timeout, but no more than
   * half the shortest TTL held (at least {@link #MIN_OPEN_TIMEOUT_MS}). An open takes no Raft
   * round, only the node's answer; a node that neither answers nor refuses would otherwise hold the
   * session for the whole request timeout, which for a 3 s lease is the whole lease. Not shorter:
   * on a loaded node an open given up and sent again is no faster, and one given up every time
   * renews nothing. (A keep-alive waits for a log entry, which a loaded cluster may take seconds to
   * commit: it keeps the request timeout.)
   */
  private synchronized long openTimeoutMs() {
    long shortest = shortestTtlNanos();
    long bound =
        shortest == 0
            ? Long.MAX_VALUE
            : Math.max(MIN_OPEN_TIMEOUT_MS, TimeUnit.NANOSECONDS.toMillis(shortest) / 2);
    return Math.min(port.requestTimeoutMs(), bound);
  }

  /** The shortest TTL held, in nanoseconds (0 with none); guarded by this. */
  private long shortestTtlNanos() {
    long shortest = Long.MAX_VALUE;
    for (Lease lease : leases.values()) {
      shortest = Math.min(shortest, lease.ttl().toNanos());
    }
    return shortest == Long.MAX_VALUE ? 0 : shortest;
  }

  /** A tenth of the shortest TTL held (at least the shortest pause); guarded by this. */
  private long pauseCapMs() {
    long cap = 1000;
    for (Lease lease : leases.values()) {
      cap = Math.min(cap, Math.max(MIN_INTERVAL_MS, lease.ttl().toMillis() / 10));
    }
    return cap;
  }

  /**
   * The answers of one stream; each stream has its own, so a late answer of an old one is known. It
   * learns its stream in {@link #beforeStart}, before any answer can arrive: a node that refuses
   * the connection fails the call at once, on another thread, and a failure that came before the
   * stream was known would be dropped, leaving the session waiting out its open timeout.
   */
  private final class Handler implements ClientResponseObserver<SessionRequest, SessionResponse> {
    final String at;
    volatile StreamObserver<SessionRequest> requests;

    Handler(String at) {
      this.at = at;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<SessionRequest> requestStream) {
      requests = requestStream;
    }

    @Override
    public void onNext(SessionResponse message) {
      switch (message.getKindCase()) {
        case OPENED -> opened(requests, message.getOpened().getAppliedIndex());
        case KEEP_ALIVE -> keepAliveAnswered(requests, message.getKeepAlive());
        case EVENT -> event(message.getEvent());
        case ERROR -> {
          var error = message.getError();
          LOG.debug("Session stream at {} ends: {} {}", at, error.getCode(), error.getMessage());
          if (error.getCode() == ResultCode.NOT_LEADER
              || error.getCode() == ResultCode.UNAVAILABLE) {
            port.redirected(at, error.getLeaderAddress());
            String named = error.getLeaderAddress();
            synchronized (LeaseSession.this) {
              if (!named.isEmpty()
                  && !named.equals(at)
                  && !(avoidingRefused() && named.equals(refused))) {
                // Told where the leader is: go there at once rather than after a back-off.
                redirectedNow = true;
              }
            }
          } else if (error.getCode() == ResultCode.COMPACTED) {
            synchronized (LeaseSession.this) {
              positionIndex = 0;
              positionSeq = 0;
            }
            verifyLeases();
          }
        }
        default -> {}
      }
    }

    @Override
    public void onError(Throwable t) {
      LOG.debug("Session stream at {} broke: {}", at, t.toString());
      if (Reachability.connectFailure(t) != null) {
        synchronized (LeaseSession.this) {
          refused = at;
          refusedNanos = System.nanoTime();
          if (opening == requests) {
            redirectedNow = true; // another node may answer at once: no back-off for a refusal
          }
        }
      }
      port.attemptFailed(t);
      if (TlsFailures.describe(t) == null) {
        port.failed(at);
        port.reconnectPromptly(at, t);
      }
      ended(requests, true);
    }

    @Override
    public void onCompleted() {
      ended(requests, false);
    }
  }

  private void opened(StreamObserver<SessionRequest> requests, long appliedIndex) {
    boolean renew;
    synchronized (this) {
      if (opening != requests) {
        return;
      }
      cancel(openTimeout);
      opening = null;
      stream = requests;
      ahead = false;
      openFailures = 0;
      immediateRedirects = 0;
      refused = null;
      lastUpNanos = System.nanoTime();
      port.answered(address);
      if (positionIndex == 0 && positionSeq == 0) {
        // Opened for new events only: a re-open asks for everything after this point.
        positionIndex = appliedIndex;
        positionSeq = Integer.MAX_VALUE;
      }
      // A keep-alive sent behind the open is answered after this; none is needed besides it.
      renew = !leases.isEmpty() && pending.isEmpty();
      scheduleTick();
    }
    client.calls().sessionReachable(true);
    LOG.debug("Session {} of {} open at {} (applied index {})", id, owner, address, appliedIndex);
    if (renew) {
      // At once: after a failover the leases have waited long enough; and a lease granted before
      // the stream opened had its events before the stream's position, which this keep-alive's
      // count of renewed leases checks.
      keepAlive();
    }
  }

  /** Stream {@code requests} ended; a new one is opened while leases need it. */
  private void ended(StreamObserver<SessionRequest> requests, boolean cancel) {
    List<Lease> atRisk;
    synchronized (this) {
      if (requests == null || (stream != requests && opening != requests)) {
        return;
      }
      boolean wasOpening = opening == requests;
      stream = null;
      opening = null;
      ahead = false;
      cancel(openTimeout);
      pending.clear();
      atRisk = new ArrayList<>(leases.values());
      if (closed) {
        return;
      }
      boolean now = !wasOpening || (redirectedNow && immediateRedirects < 3);
      if (wasOpening && now) {
        immediateRedirects++; // two nodes naming each other during an election must not spin
      }
      redirectedNow = false;
      if (now) {
        openIfNeeded();
      } else {
        retryOpenLater();
      }
    }
    if (cancel && requests instanceof ClientCallStreamObserver<SessionRequest> call) {
      call.cancel("the session stream is replaced", null);
    }
    for (Lease lease : atRisk) {
      lease.renewalMissed();
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Keep-alives.

  /** Ticks every third of the shortest TTL held; none while no lease is. */
  private void scheduleTick() {
    long interval = Long.MAX_VALUE;
    for (Lease lease : leases.values()) {
      interval = Math.min(interval, Math.max(MIN_INTERVAL_MS, lease.ttl().toMillis() / 3));
    }
    if (interval == Long.MAX_VALUE) {
      cancel(tick);
      tick = null;
      return;
    }
    if (tick != null && !tick.isDone() && interval >= tickIntervalMs) {
      return;
    }
    cancel(tick);
    tickIntervalMs = interval;
    tick = client.calls().later(this::onTick, interval, TimeUnit.MILLISECONDS);
  }

  private void onTick() {
    synchronized (this) {
      if (closed) {
        return;
      }
      tick = null;
      openIfNeeded();
      scheduleTick();
    }
    keepAlive();
  }

  /** Sends one keep-alive on the open stream, if there is one. */
  private void keepAlive() {
    synchronized (this) {
      if (stream != null) {
        sendKeepAlive(stream);
      }
    }
  }

  /** Sends one keep-alive on {@code s}, open or being opened; guarded by this. */
  private void sendKeepAlive(StreamObserver<SessionRequest> s) {
    long now = System.nanoTime();
    SessionKeepAlive.Builder ka = SessionKeepAlive.newBuilder().setSeq(++seq);
    for (Iterator<Map.Entry<Long, Excepted>> it = except.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Long, Excepted> e = it.next();
      if (now - e.getValue().untilNanos() > 0) {
        it.remove();
      } else {
        ka.addExceptTokens(e.getKey());
      }
    }
    pending.put(seq, now);
    long thisSeq = seq;
    try {
      s.onNext(SessionRequest.newBuilder().setKeepAlive(ka).build());
    } catch (RuntimeException e) {
      pending.remove(thisSeq);
      LOG.debug("Keep-alive not sent: {}", e.toString());
      return;
    }
    client
        .calls()
        .scheduler()
        .schedule(
            () -> keepAliveTimedOut(s, thisSeq), port.requestTimeoutMs(), TimeUnit.MILLISECONDS);
  }

  private void keepAliveTimedOut(StreamObserver<SessionRequest> s, long keepAliveSeq) {
    synchronized (this) {
      if (stream != s || !pending.containsKey(keepAliveSeq)) {
        return;
      }
    }
    // A stream that stops answering is as good as broken.
    LOG.debug("No keep-alive answer within {} ms at {}", port.requestTimeoutMs(), address);
    port.failed(address);
    ended(s, true);
  }

  private void keepAliveAnswered(
      StreamObserver<SessionRequest> requests, dev.fencekeeper.proto.KeepAliveAnswer answer) {
    List<Lease> covered = new ArrayList<>();
    List<Lease> missed = new ArrayList<>();
    long sentNanos;
    synchronized (this) {
      if (stream != requests) {
        return;
      }
      Long sent = pending.remove(answer.getSeq());
      if (sent == null) {
        return;
      }
      lastUpNanos = System.nanoTime();
      sentNanos = sent;
      for (Lease lease : leases.values()) {
        if (answer.getCode() != ResultCode.RENEWED) {
          missed.add(lease);
        } else if (lease.grantAnsweredNanos() - sentNanos <= 0) {
          covered.add(lease);
        }
      }
    }
    client.calls().sessionReachable(true);
    client.calls().metrics().keepAliveAnswered(System.nanoTime() - sentNanos);
    for (Lease lease : covered) {
      lease.renewedAt(sentNanos);
    }
    for (Lease lease : missed) {
      lease.renewalMissed();
    }
    if (answer.getCode() == ResultCode.RENEWED && answer.getRenewed() < covered.size()) {
      // The cluster renewed fewer leases than this client holds: some ended without their event
      // reaching this stream (before it opened). Ask about each.
      LOG.debug(
          "Keep-alive renewed {} of {} leases; checking each", answer.getRenewed(), covered.size());
      verifyLeases();
    }
  }

  private void event(LeaseEvent event) {
    Lease ended = null;
    synchronized (this) {
      if (event.getIndex() > positionIndex
          || (event.getIndex() == positionIndex && event.getSeq() > positionSeq)) {
        positionIndex = event.getIndex();
        positionSeq = event.getSeq();
      }
      LeaseEvent.Type type = event.getType();
      if (type == LeaseEvent.Type.EXPIRED
          || type == LeaseEvent.Type.REVOKED
          || type == LeaseEvent.Type.RELEASED) {
        except.remove(event.getToken());
        ended = leases.get(new Key(event.getResource(), event.getToken()));
      }
    }
    if (ended != null) {
      ended.endedOnCluster(event);
    }
  }

  /** Checks every held lease against the cluster; those no longer live there are lost. */
  private void verifyLeases() {
    List<Lease> all;
    synchronized (this) {
      if (verifying || closed) {
        return;
      }
      verifying = true;
      all = new ArrayList<>(leases.values());
    }
    verifyFrom(all, 0);
  }

  private void verifyFrom(List<Lease> all, int i) {
    if (i >= all.size()) {
      synchronized (this) {
        verifying = false;
      }
      return;
    }
    Lease lease = all.get(i);
    client
        .leaseQuery(lease.resource())
        .whenComplete(
            (r, e) -> {
              if (e == null && isGone(r, lease)) {
                lease.endedOnCluster(null);
              }
              verifyFrom(all, i + 1);
            });
  }

  private static boolean isGone(Result r, Lease lease) {
    if (r.code() == dev.fencekeeper.client.ResultCode.NOT_FOUND) {
      return true;
    }
    if (r.code() != dev.fencekeeper.client.ResultCode.FOUND) {
      return false; // unreachable: the local deadline decides meanwhile
    }
    return !(r.live() && r.token() == lease.token());
  }
}
