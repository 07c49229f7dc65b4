package dev.fencekeeper.clientport;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.statemachine.WireCodec;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCallStreamObserver;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;

/**
 * Acquire calls with {@code wait_ms > 0}, served as one call each: the node queues the acquire,
 * keeps the waiter alive in the cluster by re-sending it (same request id) well within {@code
 * lease.waiter-liveness}, and answers when the waiter is granted (it learns so from the grant's
 * lease event, without a log entry) or when the wait ends. A caller that cancels the call, or a
 * wait that ends, gives up the place in line with a {@code CancelWait} first; a grant that raced
 * with it is released by it and never handed out. Each identity may have {@code
 * limits.watches-per-client.max} such calls waiting on a node.
 */
final class WaitingAcquires {
  private final Function<Request, CompletableFuture<CommandQueue.Answer>> submit;
  private final EventHub hub;
  private final ScheduledExecutorService timer;
  private final Limits limits;
  private final long resendMs;
  private final IdentityCounts waiting = new IdentityCounts();
  private final java.util.Set<Waiter> all = java.util.concurrent.ConcurrentHashMap.newKeySet();

  WaitingAcquires(
      Function<Request, CompletableFuture<CommandQueue.Answer>> submit,
      EventHub hub,
      ScheduledExecutorService timer,
      Limits limits) {
    this.submit = submit;
    this.hub = hub;
    this.timer = timer;
    this.limits = limits;
    this.resendMs = Math.max(1, limits.waiterLiveness().toMillis() / 3);
  }

  void acquire(Request stamped, StreamObserver<Response> out) {
    AcquireRequest a = stamped.getAcquire();
    if (a.getRequestId().isEmpty()) {
      FencekeeperService.reply(
          out,
          WireCodec.invalid(
              "requestId: required with wait_ms, so that a retry keeps the place in line"));
      return;
    }
    String caller = stamped.getCaller();
    if (!waiting.tryOpen(caller, limits.maxWatchesPerClient())) {
      FencekeeperService.reply(
          out,
          Streams.overloaded(
              "identity '"
                  + caller
                  + "' already has "
                  + limits.maxWatchesPerClient()
                  + " acquires waiting on this node (limits.watches-per-client.max); nothing"
                  + " was queued, retry later"));
      return;
    }
    Waiter w =
        new Waiter(
            stamped, (ServerCallStreamObserver<Response>) out, System.nanoTime() / 1_000_000);
    all.add(w);
    // Registered before the acquire is sent: its grant cannot come before the registration.
    hub.addWaiter(a.getResource(), a.getRequestId(), w);
    w.out.setOnCancelHandler(w::cancelled);
    w.send();
  }

  /**
   * This node stopped leading: every waiting call is answered UNAVAILABLE with the new leader, and
   * its waiter stays queued in the cluster until its liveness runs out; the client re-sends the
   * acquire with the same request id to the leader to keep its place.
   */
  void leadershipLost(Function<String, Response> redirect) {
    for (Waiter w : all) {
      w.finish(
          redirect.apply(
              "this node stopped leading while the acquire waited; it is still queued: re-send"
                  + " it with the same request id to the leader to keep the place in line"));
    }
  }

  /** Calls waiting now. */
  int size() {
    return all.size();
  }

  private final class Waiter implements EventHub.GrantReceiver {
    final Request stamped;
    final ServerCallStreamObserver<Response> out;
    final long deadlineMs;
    // Guarded by this.
    private boolean done;
    private boolean givingUp;
    private Response lastWaiting;
    private ScheduledFuture<?> timerTask;

    Waiter(Request stamped, ServerCallStreamObserver<Response> out, long startMs) {
      this.stamped = stamped;
      this.out = out;
      this.deadlineMs = startMs + stamped.getAcquire().getWaitMs();
    }

    private long nowMs() {
      return System.nanoTime() / 1_000_000;
    }

    /** Sends (or re-sends) the acquire with what is left of the wait. */
    void send() {
      long left = deadlineMs - nowMs();
      synchronized (this) {
        if (done || givingUp) {
          return;
        }
      }
      if (left <= 0) {
        giveUp();
        return;
      }
      Request request =
          stamped.toBuilder().setAcquire(stamped.getAcquire().toBuilder().setWaitMs(left)).build();
      submit.apply(request).thenAccept(answer -> answered(answer.response()));
    }

    private void answered(Response r) {
      if (r.getCode() != ResultCode.WAITING) {
        // Granted, refused, or not sent: that is the answer. (A grant after giving up was
        // released by the CancelWait already on its way, or about to be: see giveUp.)
        synchronized (this) {
          if (givingUp && r.getCode() == ResultCode.GRANTED) {
            return;
          }
        }
        finish(r);
        return;
      }
      synchronized (this) {
        if (done || givingUp) {
          return;
        }
        lastWaiting = r;
        long left = deadlineMs - nowMs();
        if (timerTask != null) {
          timerTask.cancel(false);
        }
        timerTask =
            left <= resendMs
                ? timer.schedule(this::giveUp, Math.max(0, left), TimeUnit.MILLISECONDS)
                : timer.schedule(this::send, resendMs, TimeUnit.MILLISECONDS);
      }
    }

    @Override
    public void onGranted(LeaseEvent grant) {
      synchronized (this) {
        if (done || givingUp) {
          return;
        }
      }
      finish(
          Response.newBuilder()
              .setCode(ResultCode.GRANTED)
              .setToken(grant.getToken())
              .setCurrentToken(grant.getToken())
              .setHolderOwner(grant.getOwner())
              .setExpiresAtMs(grant.getExpiresAtMs())
              .setTtlMs(grant.getExpiresAtMs() - grant.getAtMs())
              .setLive(true)
              .setNowMs(grant.getAtMs())
              .setAppliedIndex(grant.getIndex())
              .build());
    }

    /** The wait ended: leave the line, then answer what the last re-send said. */
    void giveUp() {
      synchronized (this) {
        if (done || givingUp) {
          return;
        }
        givingUp = true;
      }
      cancelWait()
          .thenAccept(
              c -> {
                Response last;
                synchronized (this) {
                  last = lastWaiting;
                }
                finish(
                    last != null
                        ? last.toBuilder()
                            .setMessage(
                                "the wait of "
                                    + stamped.getAcquire().getWaitMs()
                                    + " ms ended without a grant; no longer queued")
                            .build()
                        : c.response());
              });
    }

    /**
     * The caller cancelled the call before it was answered: leave the line; nobody is left to
     * answer. The CancelWait also releases a grant that raced with the cancel (its request id still
     * holds it). Once the call was answered, the caller has what it was given.
     */
    void cancelled() {
      synchronized (this) {
        // Answered already: the caller has its grant (a gateway client that closes its connection
        // after reading the answer cancels the call); giving up now would release that lease.
        if (givingUp || done) {
          return;
        }
        givingUp = true;
      }
      cancelWait().thenAccept(c -> finish(null));
    }

    private CompletableFuture<CommandQueue.Answer> cancelWait() {
      AcquireRequest a = stamped.getAcquire();
      return submit.apply(
          Request.newBuilder()
              .setCancelWait(
                  CancelWaitRequest.newBuilder()
                      .setResource(a.getResource())
                      .setRequestId(a.getRequestId()))
              .setCaller(stamped.getCaller())
              .build());
    }

    /** Answers the call (null: the caller is gone) and forgets the waiter. */
    void finish(Response answer) {
      synchronized (this) {
        if (done) {
          return;
        }
        done = true;
        if (timerTask != null) {
          timerTask.cancel(false);
        }
      }
      AcquireRequest a = stamped.getAcquire();
      hub.removeWaiter(a.getResource(), a.getRequestId(), this);
      all.remove(this);
      waiting.close(stamped.getCaller());
      if (answer != null) {
        FencekeeperService.reply(out, answer);
      }
    }
  }
}
