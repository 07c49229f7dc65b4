package dev.fencekeeper.client;

import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
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
 * {@link Lease} kept by the client's {@link LeaseSession}, acquires that wait in line ({@link
 * WaitingAcquire}), and what {@link FencingClient#close()} gives back: waits given up, leases
 * released, grants that arrive late released too.
 */
final class Acquisitions {
  private static final Logger LOG = LoggerFactory.getLogger(FencingClient.class);

  private final FencingClient client;
  private final ClusterCalls calls;
  private final LeaseSession session;
  private final String defaultOwner;
  // Set first thing in close(): a grant that arrives from then on is released, not handed out.
  private volatile boolean closing;
  private final Set<WaitingAcquire> openWaits = ConcurrentHashMap.newKeySet();
  // Leases handed out and neither lost, closed nor abandoned: close() releases them.
  private final Set<Lease> held = ConcurrentHashMap.newKeySet();
  // Acquires, cancel-waits and releases of late grants still in flight: close() waits for them.
  private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();

  Acquisitions(
      FencingClient client, ClusterCalls calls, LeaseSession session, String defaultOwner) {
    this.client = client;
    this.calls = calls;
    this.session = session;
    this.defaultOwner = defaultOwner;
  }

  FencingClient client() {
    return client;
  }

  ClusterCalls calls() {
    return calls;
  }

  /**
   * A waiting acquire: see {@link FencingClient#acquireAsync(String, Duration, Duration,
   * AcquireOptions)}.
   */
  CompletableFuture<Lease> acquireAsync(
      String resource, Duration ttl, Duration waitTimeout, AcquireOptions options) {
    checkAcquire(resource, ttl, options);
    java.util.Objects.requireNonNull(waitTimeout, "waitTimeout must not be null");
    String requestId =
        options.requestId() != null ? options.requestId() : UUID.randomUUID().toString();
    String owner = options.owner() != null ? options.owner() : defaultOwner;
    WaitingAcquire waiting =
        new WaitingAcquire(
            this,
            resource,
            ttl,
            owner,
            requestId,
            options.lockDelay(),
            System.nanoTime() + waitTimeout.toNanos());
    if (closing) {
      throw closedError();
    }
    openWaits.add(waiting);
    // Whoever completes the future first — the wait, a cancel, orTimeout, close() — the place is
    // given up.
    waiting.result.whenComplete(
        (lease, error) -> {
          openWaits.remove(waiting);
          if (error != null && !waiting.leftQueue) {
            track(cancelWait(resource, waiting.requestId));
          }
        });
    session.openAhead();
    waiting.attempt();
    return waiting.result;
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
              .command(acquireRequest(resource, ttl, options.owner(owner), sessionId()))
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

  /** The session id leases are acquired with. */
  String sessionId() {
    return session.id();
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

  CompletableFuture<Response> cancelWait(String resource, String requestId) {
    return calls.command(
        Request.newBuilder()
            .setCancelWait(
                CancelWaitRequest.newBuilder().setResource(resource).setRequestId(requestId))
            .build());
  }

  Request acquireRequest(String resource, Duration ttl, AcquireOptions options, String sessionId) {
    return Request.newBuilder()
        .setAcquire(
            AcquireRequest.newBuilder()
                .setResource(resource)
                .setOwner(options.owner() == null ? defaultOwner : options.owner())
                .setTtlMs(ttl.toMillis())
                .setRequestId(
                    options.requestId() == null
                        ? UUID.randomUUID().toString()
                        : options.requestId())
                .setLockDelayMs(options.lockDelay().toMillis())
                .setSessionId(sessionId))
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
    for (WaitingAcquire w : openWaits) {
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
