package dev.fencekeeper.client;

import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.Response;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leases one {@link FencingClient} hands out: acquires whose grant becomes a self-renewing
 * {@link Lease} kept by the client's {@link LeaseSession}, acquires that wait in line on the leader
 * (one Acquire call with {@code wait_ms}, held open by the node until the grant or the end of the
 * wait), and what {@link FencingClient#close()} gives back: waits given up, leases released, grants
 * that arrive late released too.
 */
final class Acquisitions {
  private static final Logger LOG = LoggerFactory.getLogger(FencingClient.class);

  private final LeaseCalls client;
  private final ClusterCalls calls;
  private final LeaseSession session;
  private final String defaultOwner;
  private final RequestIds requestIds;
  // Set first thing in close(): a grant that arrives from then on is released, not handed out.
  private volatile boolean closing;
  private final Set<Waiting> openWaits = ConcurrentHashMap.newKeySet();
  // Leases handed out and neither lost, closed nor abandoned: close() releases them.
  private final Set<Lease> held = ConcurrentHashMap.newKeySet();
  // Acquires, cancel-waits and releases of late grants still in flight: close() waits for them.
  private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();

  Acquisitions(
      LeaseCalls client, LeaseSession session, String defaultOwner, RequestIds requestIds) {
    this.client = client;
    this.calls = client.calls();
    this.session = session;
    this.defaultOwner = defaultOwner;
    this.requestIds = requestIds;
  }

  /**
   * A waiting acquire: see {@link FencingClient#acquireAsync(String, Duration, Duration,
   * AcquireOptions)}.
   */
  CompletableFuture<Lease> acquireAsync(
      String resource, Duration ttl, Duration waitTimeout, AcquireOptions options) {
    checkAcquire(resource, ttl, options);
    java.util.Objects.requireNonNull(waitTimeout, "waitTimeout must not be null");
    if (closing) {
      throw closedError();
    }
    Waiting waiting =
        new Waiting(
            acquireRequest(resource, ttl, options, session.id()),
            System.nanoTime() + waitTimeout.toNanos());
    openWaits.add(waiting);
    // Whoever completes the future first — the wait, a cancel, orTimeout, close() — the place is
    // given up: the call is cancelled (the node then leaves the line itself), and a CancelWait is
    // sent too, which also reaches the leader when the call was between nodes, and releases a grant
    // that raced with giving up.
    waiting.result.whenComplete(
        (lease, error) -> {
          openWaits.remove(waiting);
          if (error != null && !waiting.leftQueue) {
            waiting.giveUp();
            track(cancelWait(resource, waiting.request.getRequestId()));
          }
        });
    session.openAhead();
    waiting.send();
    return waiting.result;
  }

  /** One acquire waiting in line on the leader, as one call. */
  private final class Waiting {
    volatile AcquireRequest request; // its request id replaced when its grant ran out unheard
    final long waitUntilNanos;
    final CompletableFuture<Lease> result = new CompletableFuture<>();
    // True once this waiter is known not to be queued: a final answer, or refused unqueued.
    volatile boolean leftQueue;
    private volatile Runnable giveUpCall = () -> {};

    Waiting(AcquireRequest request, long waitUntilNanos) {
      this.request = request;
      this.waitUntilNanos = waitUntilNanos;
    }

    void send() {
      if (result.isDone()) {
        return;
      }
      long sentNanos = System.nanoTime();
      ClusterCalls.Waiting call = calls.waitingAcquire(request, waitUntilNanos);
      giveUpCall = call.giveUp();
      if (result.isDone()) {
        call.giveUp().run();
      }
      track(call.answer()).thenApply(Result::new).whenComplete((r, e) -> answered(r, e, sentNanos));
    }

    void giveUp() {
      giveUpCall.run();
    }

    private void answered(Result r, Throwable error, long sentNanos) {
      LOG.debug(
          "Waited for {} ({}): {} after {} ms",
          request.getResource(),
          request.getRequestId(),
          error != null ? error : r,
          (System.nanoTime() - sentNanos) / 1_000_000);
      if (error != null) {
        result.completeExceptionally(error);
        return;
      }
      switch (r.code()) {
        case GRANTED -> granted(r, sentNanos, false);
        case WAITING, HELD, LOCK_DELAYED -> {
          // The wait ended on the node, which gave up the place in line before it answered.
          leftQueue = true;
          result.completeExceptionally(new LeaseHeldException(r));
        }
        case UNAVAILABLE -> {
          // No node answered within the call's bounds (the unreachable bound, or the call timeout
          // through an election): that is an outage, not a holder, and a worker that skips its work
          // while someone else holds the resource must not skip it silently all through one. The
          // future's completion sends a CancelWait, in case an attempt queued this waiter.
          result.completeExceptionally(new FencingException(r));
        }
        default -> {
          leftQueue = true; // refused (invalid input, permission): never queued
          result.completeExceptionally(new FencingException(r));
        }
      }
    }

    /**
     * The lease, its local deadline counted from a moment no later than the grant: the send of the
     * call it answers. When the wait took so long that little of the TTL would be left by that
     * reckoning, the same acquire is asked again without a wait ({@code exact} then), whose answer
     * (the same lease, by its request id) says how much of it is left now; if little is, the
     * session renews it at once.
     */
    private void granted(Result r, long sentNanos, boolean exact) {
      Duration ttl = Duration.ofMillis(request.getTtlMs());
      if (!r.live()) {
        // Granted while queued, but it ran out before this client heard of it (a stalled client, a
        // slow leader change): that lease is gone. Queue again rather than hand back a dead lease.
        LOG.debug(
            "Grant {} of {} expired before it was picked up; queueing again",
            r.token(),
            request.getResource());
        request = request.toBuilder().setRequestId(requestIds.next()).build();
        send();
        return;
      }
      long startNanos = leaseStart(ttl, sentNanos, r.expiresAtMs() - r.nowMs());
      if (exact || startNanos + ttl.toNanos() - System.nanoTime() >= ttl.toNanos() / 2) {
        grant(
            new Lease(
                client, request.getResource(), request.getOwner(), ttl, r.token(), startNanos));
        return;
      }
      long askedNanos = System.nanoTime();
      track(calls.command(Rpc.ACQUIRE, request.toBuilder().setWaitMs(0).build()))
          .thenApply(Result::new)
          .whenComplete(
              (again, e) -> {
                if (e == null && again.code() == ResultCode.GRANTED && again.token() == r.token()) {
                  granted(again, askedNanos, true);
                } else {
                  answered(again, e, askedNanos);
                }
              });
    }

    /**
     * Hands the lease over; if the caller gave up meanwhile, its CancelWait is on its way and this
     * releases.
     */
    @SuppressWarnings("unchecked")
    private void grant(Lease lease) {
      leftQueue = true;
      deliver((CompletableFuture<Object>) (CompletableFuture<?>) result, lease, lease);
    }

    /**
     * The client is closing: fail the wait, which gives up its place (see {@link #acquireAsync}).
     */
    void abandon() {
      result.completeExceptionally(
          new IllegalStateException("the FencingClient was closed while this acquire waited"));
    }
  }

  /**
   * When, on this client's clock, to count a lease's TTL from: {@code boundNanos} is a moment no
   * later than the cluster's view of the grant, {@code leftMs} what the cluster said was left of
   * the lease then.
   */
  private static long leaseStart(Duration ttl, long boundNanos, long leftMs) {
    return boundNanos
        - Duration.ofMillis(ttl.toMillis() - Math.min(leftMs, ttl.toMillis())).toNanos();
  }

  /**
   * One acquire whose grant becomes a {@link Lease}: handed to the caller if it still waits for it,
   * released at once otherwise.
   */
  @SuppressWarnings("unchecked")
  <T> CompletableFuture<T> leaseFrom(
      String resource, Duration ttl, AcquireOptions options, boolean optional) {
    checkAcquire(resource, ttl, options);
    if (closing) {
      throw closedError();
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    String owner = options.owner() != null ? options.owner() : defaultOwner;
    // The local deadline counts from before the request leaves, so it can only be early, never
    // late.
    long sentNanos = System.nanoTime();
    session.openAhead();
    CompletableFuture<Result> attempt;
    try {
      attempt =
          calls
              .command(
                  Rpc.ACQUIRE, acquireRequest(resource, ttl, options.owner(owner), session.id()))
              .thenApply(Result::new);
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
      return result;
    }
    track(attempt);
    attempt.whenComplete(
        (r, error) -> {
          if (error != null) {
            result.completeExceptionally(error);
          } else if (r.code() == ResultCode.GRANTED) {
            Lease lease = new Lease(client, resource, owner, ttl, r.token(), sentNanos);
            deliver(
                (CompletableFuture<Object>) result, lease, optional ? Optional.of(lease) : lease);
          } else if (optional
              && (r.code() == ResultCode.HELD || r.code() == ResultCode.LOCK_DELAYED)) {
            result.complete((T) Optional.empty());
          } else if (r.code() == ResultCode.HELD) {
            result.completeExceptionally(new LeaseHeldException(r));
          } else {
            result.completeExceptionally(new FencingException(r));
          }
        });
    return result;
  }

  /**
   * Arguments no acquire can be built from fail here, at once, before anything is sent; values the
   * cluster judges (a TTL that is not positive) are answered INVALID_ARGUMENT by it, as before.
   */
  static void checkAcquire(String resource, Duration ttl, AcquireOptions options) {
    java.util.Objects.requireNonNull(resource, "resource must not be null");
    java.util.Objects.requireNonNull(ttl, "ttl must not be null");
    java.util.Objects.requireNonNull(options, "options must not be null");
  }

  /**
   * Hands {@code lease} over by completing {@code result} with {@code value}; when the caller no
   * longer waits (cancelled, timed out, the client closing), releases it instead, so no grant is
   * left held, or renewed, by nobody.
   */
  void deliver(CompletableFuture<Object> result, Lease lease, Object value) {
    // The lease joins the session before the caller can see it: a caller that abandons it in a
    // callback run by complete() must find it there to take out, or keep-alives would renew a lease
    // nobody holds for as long as the client lives.
    held.add(lease);
    session.add(lease);
    if (lease.state() == Lease.State.LOST || lease.state() == Lease.State.CLOSED) {
      // Its local deadline passed before it joined (a grant after a long wait): forget() found
      // nothing to take out then.
      forget(lease, false);
    }
    if (closing || !result.complete(value)) {
      LOG.debug("Releasing {}: granted after its caller gave up", lease);
      track(lease.closeAsync());
    }
  }

  /**
   * Forgets a lease that is no longer held (lost, closed, abandoned): close() has nothing to
   * release.
   */
  void forget(Lease lease, boolean endedOnCluster) {
    held.remove(lease);
    session.remove(lease, endedOnCluster);
  }

  <T> CompletableFuture<T> track(CompletableFuture<T> call) {
    inFlight.add(call);
    call.whenComplete((r, e) -> inFlight.remove(call));
    return call;
  }

  static IllegalStateException closedError() {
    return new IllegalStateException("this FencingClient is closed; build a new one");
  }

  private CompletableFuture<Response> cancelWait(String resource, String requestId) {
    return calls.command(
        Rpc.CANCEL_WAIT,
        CancelWaitRequest.newBuilder().setResource(resource).setRequestId(requestId).build());
  }

  /**
   * The acquire {@code options} describe, kept alive by session {@code sessionId} (empty: by none).
   */
  AcquireRequest acquireRequest(
      String resource, Duration ttl, AcquireOptions options, String sessionId) {
    return AcquireRequest.newBuilder()
        .setResource(resource)
        .setOwner(options.owner() == null ? defaultOwner : options.owner())
        .setTtlMs(ttl.toMillis())
        .setRequestId(options.requestId() == null ? requestIds.next() : options.requestId())
        .setLockDelayMs(options.lockDelay().toMillis())
        .setSessionId(sessionId)
        .build();
  }

  private void awaitInFlight(long deadlineNanos) {
    while (!inFlight.isEmpty()) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        return;
      }
      try {
        CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0]))
            .get(left, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (ExecutionException | TimeoutException | CancellationException e) {
        // Failures are settled by each call; the loop re-checks what is still in flight.
        if (e instanceof TimeoutException) {
          return;
        }
      }
    }
  }

  /**
   * Gives up every waiting acquire and releases every lease still held (not the abandoned ones),
   * waiting for the answers until {@code deadlineNanos}; false if close had begun already.
   */
  boolean giveBackAll(long deadlineNanos, Duration closeTimeout) {
    synchronized (this) {
      if (closing) {
        return false;
      }
      closing = true;
    }
    for (Waiting w : openWaits) {
      w.abandon();
    }
    // Acquires in flight: a grant that still arrives is released by deliver() and tracked.
    awaitInFlight(deadlineNanos);
    for (Lease lease : List.copyOf(held)) {
      track(lease.closeAsync());
    }
    awaitInFlight(deadlineNanos);
    if (!inFlight.isEmpty()) {
      LOG.warn(
          "Closed with {} release(s) or cancel(s) unanswered after {} ms; those leases expire by"
              + " their TTL",
          inFlight.size(),
          closeTimeout.toMillis());
    }
    return true;
  }
}
