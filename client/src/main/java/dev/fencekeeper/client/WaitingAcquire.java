package dev.fencekeeper.client;

import dev.fencekeeper.client.wire.WaiterWakeups;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.WatchRequest;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One blocking acquire: re-sends the same acquire (same request id) to stay queued, and learns of
 * its grant from the lease event that names its request id; gives its place up when the wait ends.
 */
final class WaitingAcquire {
  private static final Logger LOG = LoggerFactory.getLogger(FencingClient.class);
  // How often a queued acquire is re-sent: well inside the cluster's waiter-liveness window (10 s
  // default).
  private static final long WAITER_RESEND_MS = 1_000;

  private final Acquisitions acquisitions;
  private final ClusterCalls calls;
  final String resource;
  final Duration ttl;
  final String owner;
  volatile String requestId; // replaced when a grant ran out before this client heard of it
  final Duration lockDelay;
  final long waitUntilNanos;
  final CompletableFuture<Lease> result = new CompletableFuture<>();
  // True once this waiter is known not to be queued (a final answer, or its own CancelWait sent).
  volatile boolean leftQueue;
  long watchIndex;
  int watchSeq = Integer.MAX_VALUE;
  volatile long lastSentNanos;
  // When the acquire last answered WAITING was sent: the grant came after the node queued it, so
  // a lease timed from here ends locally no later than in the cluster. 0 until an answer said
  // WAITING.
  volatile long queuedSinceNanos;

  WaitingAcquire(
      Acquisitions acquisitions,
      String resource,
      Duration ttl,
      String owner,
      String requestId,
      Duration lockDelay,
      long waitUntilNanos) {
    this.acquisitions = acquisitions;
    this.calls = acquisitions.calls();
    this.resource = resource;
    this.ttl = ttl;
    this.owner = owner;
    this.requestId = requestId;
    this.lockDelay = lockDelay;
    this.waitUntilNanos = waitUntilNanos;
  }

  void attempt() {
    if (result.isDone()) {
      return;
    }
    long remainingMs = Math.max(0, (waitUntilNanos - System.nanoTime()) / 1_000_000);
    long sentNanos = System.nanoTime();
    lastSentNanos = sentNanos;
    Request request =
        Request.newBuilder()
            .setAcquire(
                AcquireRequest.newBuilder()
                    .setResource(resource)
                    .setOwner(owner)
                    .setTtlMs(ttl.toMillis())
                    .setRequestId(requestId)
                    .setWaitMs(remainingMs)
                    .setLockDelayMs(lockDelay.toMillis())
                    .setSessionId(acquisitions.sessionId()))
            .build();
    acquisitions
        .track(calls.command(request))
        .thenApply(Result::new)
        .whenComplete((r, e) -> onAnswer(r, e, sentNanos));
  }

  private void onAnswer(Result r, Throwable error, long sentNanos) {
    LOG.debug(
        "Waiting for {} ({}): {} after {} ms",
        resource,
        requestId,
        error != null ? error : r,
        (System.nanoTime() - sentNanos) / 1_000_000);
    if (error != null) {
      result.completeExceptionally(error);
      return;
    }
    switch (r.code()) {
      case GRANTED -> {
        if (!r.live()) {
          // Granted while queued, but it ran out before this client heard of it (a stalled
          // client, a slow leader change): that lease is gone. Queue again rather than hand back
          // a dead lease.
          LOG.debug(
              "Grant {} of {} expired before it was picked up; queueing again",
              r.token(),
              resource);
          requestId = UUID.randomUUID().toString();
          attempt();
          return;
        }
        // A grant made while queued started before this request was sent: count only the time the
        // cluster says is left, from the send time.
        grant(
            new Lease(
                acquisitions.client(),
                resource,
                owner,
                ttl,
                r.token(),
                leaseStart(sentNanos, r.expiresAtMs() - r.nowMs())));
      }
      case UNAVAILABLE -> {
        // No node answered within the call's bounds (the unreachable bound, or the call timeout
        // through an election): that is an outage, not a holder, and a worker that skips its work
        // while someone else holds the resource must not skip it silently all through one. The
        // future's completion sends a CancelWait, in case an earlier attempt queued this waiter.
        result.completeExceptionally(new FencingException(r));
      }
      case WAITING -> {
        queuedSinceNanos = sentNanos;
        // Nothing before the entry that answered WAITING can be this waiter's grant (it would
        // have answered GRANTED), so the watch starts at that entry: a new waiter does not
        // download the resource's history, which cost each W6 hand-off an O(history) watch
        // answer.
        if (r.appliedIndex() - 1 >= watchIndex) {
          watchIndex = r.appliedIndex() - 1;
          watchSeq = Integer.MAX_VALUE;
        }
        if (System.nanoTime() >= waitUntilNanos) {
          giveUp(r);
        } else {
          awaitChange();
        }
      }
      case HELD, LOCK_DELAYED -> {
        if (System.nanoTime() >= waitUntilNanos) {
          leftQueue = true; // answered without queueing it
          result.completeExceptionally(new LeaseHeldException(r));
        } else {
          awaitChange(); // e.g. the wait was zero when sent; try again until the deadline
        }
      }
      default -> {
        leftQueue = true; // refused (invalid input, permission): never queued
        result.completeExceptionally(new FencingException(r));
      }
    }
  }

  /**
   * Sleeps until an event on the resource that may concern this waiter, the re-send interval, or
   * the end of the wait. Events that cannot (another waiter's grant) only move the watch on: if
   * every queued client re-sent its acquire on every grant, each grant would cost one log entry per
   * waiter, and the leader would spend its time on re-sends instead of grants.
   */
  private void awaitChange() {
    if (result.isDone()) {
      return;
    }
    long now = System.nanoTime();
    long leftMs = Math.max(1, (waitUntilNanos - now) / 1_000_000);
    long resendInMs = Math.max(1, (lastSentNanos + WAITER_RESEND_MS * 1_000_000 - now) / 1_000_000);
    long timeoutMs = Math.min(leftMs, resendInMs);
    calls
        .watchOnce(
            WatchRequest.newBuilder()
                .setResource(resource)
                .setAfterIndex(watchIndex)
                .setAfterSeq(watchSeq)
                .setTimeoutMs(timeoutMs)
                .setWaiterRequestId(requestId)
                .build())
        .whenComplete(
            (w, e) -> {
              boolean moved = false;
              if (w != null
                  && w.getAppliedIndex() > 0
                  && w.getCode() != dev.fencekeeper.proto.ResultCode.COMPACTED) {
                if (w.getEventsCount() > 0) {
                  var last = w.getEvents(w.getEventsCount() - 1);
                  watchIndex = last.getIndex();
                  watchSeq = last.getSeq();
                  moved = true;
                } else {
                  watchIndex = Math.max(watchIndex, w.getAppliedIndex());
                }
              }
              if (e != null) {
                calls.later(this::attempt, 50, TimeUnit.MILLISECONDS);
              } else if (moved && takeGrantFrom(w.getEventsList())) {
                return;
              } else if (moved
                  && !WaiterWakeups.mayConcern(w.getEventsList(), requestId)
                  && System.nanoTime() - lastSentNanos < WAITER_RESEND_MS * 1_000_000
                  && System.nanoTime() < waitUntilNanos) {
                awaitChange();
              } else {
                attempt();
              }
            });
  }

  /**
   * Completes with the lease the events grant to this waiter, without the log entry a re-sent
   * acquire would cost: the event carries the token and the lease's length. False (re-send, as
   * before) when they grant nothing to it, when its lease already ended among them, or when this
   * client cannot bound when the grant started (no WAITING answer yet) or that bound leaves nothing
   * of the lease.
   */
  private boolean takeGrantFrom(List<dev.fencekeeper.proto.LeaseEvent> events) {
    dev.fencekeeper.proto.LeaseEvent grant = null;
    for (dev.fencekeeper.proto.LeaseEvent event : events) {
      if (event.getType() == dev.fencekeeper.proto.LeaseEvent.Type.ACQUIRED
          && event.getRequestId().equals(requestId)) {
        grant = event;
      } else if (grant != null
          && event.getToken() == grant.getToken()
          && event.getType() != dev.fencekeeper.proto.LeaseEvent.Type.RENEWED) {
        return false; // released, expired or revoked before this client heard of it
      }
    }
    long since = queuedSinceNanos;
    if (grant == null || since == 0) {
      return false;
    }
    long startNanos = leaseStart(since, grant.getExpiresAtMs() - grant.getAtMs());
    if (startNanos + ttl.toNanos() - System.nanoTime() < ttl.toNanos() / 2) {
      return false; // too little left by this client's reckoning; the re-sent acquire tells
      // exactly
    }
    grant(new Lease(acquisitions.client(), resource, owner, ttl, grant.getToken(), startNanos));
    return true;
  }

  /**
   * When, on this client's clock, to count the lease's TTL from: {@code boundNanos} is a moment no
   * later than the cluster's view of the grant, {@code leftMs} what the cluster said was left of
   * the lease then.
   */
  private long leaseStart(long boundNanos, long leftMs) {
    return boundNanos
        - Duration.ofMillis(ttl.toMillis() - Math.min(leftMs, ttl.toMillis())).toNanos();
  }

  /**
   * Hands the lease over; if the caller gave up meanwhile, its CancelWait is on its way and this
   * releases.
   */
  @SuppressWarnings("unchecked")
  private void grant(Lease lease) {
    leftQueue = true;
    acquisitions.deliver((CompletableFuture<Object>) (CompletableFuture<?>) result, lease, lease);
  }

  /** The wait is over: leave the queue (which also releases a grant that raced with giving up). */
  private void giveUp(Result last) {
    leftQueue = true;
    acquisitions
        .track(acquisitions.cancelWait(resource, requestId))
        .whenComplete((c, e) -> result.completeExceptionally(new LeaseHeldException(last)));
  }

  /**
   * The client is closing: fail the wait, which sends its CancelWait (see
   * Acquisitions.acquireAsync).
   */
  void abandon() {
    result.completeExceptionally(
        new IllegalStateException("the FencingClient was closed while this acquire waited"));
  }
}
