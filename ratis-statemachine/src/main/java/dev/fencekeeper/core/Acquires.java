package dev.fencekeeper.core;

import dev.fencekeeper.config.Limits;

/**
 * Acquires and the queue of waiters behind a held resource: an acquire is granted at once when the
 * resource is free, queued when it asked to wait, refused otherwise; a retry with the same request
 * id gets the same answer, and a waiter may give up its place. Granting the next waiter when a
 * lease ends is {@link Leases}'s, which settles every resource as time moves.
 */
final class Acquires {
  private final Limits limits;
  private final Leases leases;

  Acquires(Limits limits, Leases leases) {
    this.limits = limits;
    this.leases = leases;
  }

  Outcome acquire(Command.Acquire a, long entryIndex) {
    long nowMs = leases.nowMs();
    ResourceRecord r = leases.record(a.resource());
    if (r != null && !a.requestId().isEmpty()) {
      LeaseRecord mine = r.lease();
      Waiter queued = r.waiters().get(a.requestId());
      if ((mine != null
              && mine.token() == r.lastToken()
              && mine.requestId().equals(a.requestId())
              && !mine.permits(a.caller()))
          || (queued != null && !queued.identity().equals(a.caller()))) {
        // Another identity's request id: answering would hand it someone else's lease or place in
        // line.
        return Outcome.of(Code.PERMISSION_DENIED)
            .message(
                "request id "
                    + a.requestId()
                    + " on '"
                    + a.resource()
                    + "' belongs to another identity")
            .currentToken(r.lastToken())
            .nowMs(nowMs)
            .build();
      }
      if (mine != null && mine.token() == r.lastToken() && mine.requestId().equals(a.requestId())) {
        // A retry of an acquire that was granted (perhaps to it as a waiter): the same lease, not a
        // second.
        return Answers.leaseOutcome(nowMs, Code.GRANTED, r, mine)
            .live(mine.isLiveAt(nowMs))
            .build();
      }
      if (queued != null) {
        Waiter refreshed =
            new Waiter(
                queued.requestId(),
                queued.owner(),
                queued.ttlMs(),
                queued.lockDelayMs(),
                queued.enqueuedAtMs(),
                queued.waitUntilMs(),
                nowMs + limits.waiterLiveness().toMillis(),
                queued.identity(),
                queued.sessionId());
        r.mutableWaiters().put(a.requestId(), refreshed);
        return waiting(r, a.requestId(), entryIndex).toBuilder()
            .facts(new Outcome.Facts(false, true, 0, 0))
            .build();
      }
    }
    LeaseRecord held = r == null ? null : r.liveLease(nowMs);
    boolean delayed = r != null && r.blockedUntilMs() > nowMs;
    int queuedAhead = r == null ? 0 : attendedWaiters(r);
    if (held == null && !delayed && queuedAhead == 0) {
      if (r == null) {
        if (leases.size() >= limits.maxResources()) {
          return Outcome.of(Code.OVERLOADED)
              .message(
                  "the cluster already keeps "
                      + leases.size()
                      + " resources (limits.resources.max); release some or retry once idle ones"
                      + " are forgotten")
              .nowMs(nowMs)
              .build();
        }
        r = leases.create(a.resource());
      }
      LeaseRecord lease =
          leases.grant(
              r,
              a.owner(),
              a.ttlMs(),
              a.requestId(),
              a.lockDelayMs(),
              a.caller(),
              a.sessionId(),
              entryIndex);
      leases.refile(r);
      return Answers.leaseOutcome(nowMs, Code.GRANTED, r, lease).build();
    }
    if (a.waitMs() > 0) {
      if (r.waiters().size() >= limits.maxWaitersPerResource()) {
        return Answers.rejection(
                nowMs,
                Code.HELD,
                r,
                0,
                "'" + a.resource() + "' already has " + r.waiters().size() + " waiters, the limit")
            .build();
      }
      r.mutableWaiters()
          .put(
              a.requestId(),
              new Waiter(
                  a.requestId(),
                  a.owner(),
                  a.ttlMs(),
                  a.lockDelayMs(),
                  nowMs,
                  nowMs + a.waitMs(),
                  nowMs + limits.waiterLiveness().toMillis(),
                  a.caller(),
                  a.sessionId()));
      leases.refile(r);
      return waiting(r, a.requestId(), entryIndex);
    }
    if (held != null) {
      return Outcome.of(Code.HELD)
          .message(
              "'" + a.resource() + "' is held by token " + held.token() + " (" + held.owner() + ")")
          .token(held.token())
          .currentToken(r.lastToken())
          .holderOwner(held.owner())
          .expiresAtMs(held.expiresAtMs())
          .ttlMs(held.ttlMs())
          .nowMs(nowMs)
          .build();
    }
    if (delayed) {
      return Outcome.of(Code.LOCK_DELAYED)
          .message(
              "'"
                  + a.resource()
                  + "' is in lock-delay after an involuntary end, until "
                  + r.blockedUntilMs())
          .currentToken(r.lastToken())
          .expiresAtMs(r.blockedUntilMs())
          .nowMs(nowMs)
          .build();
    }
    return Answers.rejection(
            nowMs,
            Code.HELD,
            r,
            0,
            queuedAhead + " waiter(s) are queued for '" + a.resource() + "'")
        .build();
  }

  private Outcome waiting(ResourceRecord r, String requestId, long entryIndex) {
    long nowMs = leases.nowMs();
    int position = 1;
    for (String id : r.waiters().keySet()) {
      if (id.equals(requestId)) {
        break;
      }
      position++;
    }
    Outcome.Builder b =
        Outcome.of(Code.WAITING)
            .position(position)
            .queuedAtIndex(entryIndex)
            .currentToken(r.lastToken())
            .nowMs(nowMs);
    LeaseRecord held = r.liveLease(nowMs);
    if (held != null) {
      b.token(held.token()).holderOwner(held.owner()).expiresAtMs(held.expiresAtMs());
    }
    return b.build();
  }

  private int attendedWaiters(ResourceRecord r) {
    long nowMs = leases.nowMs();
    int n = 0;
    for (Waiter w : r.waiters().values()) {
      if (w.isAttendedAt(nowMs)) {
        n++;
      }
    }
    return n;
  }

  Outcome cancelWait(Command.CancelWait c, long entryIndex) {
    long nowMs = leases.nowMs();
    ResourceRecord r = leases.record(c.resource());
    if (r == null) {
      return Outcome.of(Code.NOT_FOUND)
          .message("'" + c.resource() + "' has no waiters")
          .nowMs(nowMs)
          .build();
    }
    Waiter waiter = r.waiters().get(c.requestId());
    LeaseRecord granted = r.liveLease(nowMs);
    if ((waiter != null && !waiter.identity().equals(c.caller()))
        || (waiter == null
            && granted != null
            && granted.requestId().equals(c.requestId())
            && !granted.permits(c.caller()))) {
      return Outcome.of(Code.PERMISSION_DENIED)
          .message(
              "request id "
                  + c.requestId()
                  + " on '"
                  + c.resource()
                  + "' belongs to another identity")
          .nowMs(nowMs)
          .build();
    }
    if (r.mutableWaiters().remove(c.requestId()) != null) {
      leases.settle(r, entryIndex);
      return Outcome.of(Code.OK).message("no longer waiting").nowMs(nowMs).build();
    }
    LeaseRecord lease = r.liveLease(nowMs);
    if (lease != null && lease.requestId().equals(c.requestId())) {
      // Granted while its client was giving up: nobody will use it, so it must not block the
      // others.
      leases.end(r, LeaseEvent.Type.RELEASED, entryIndex);
      return Outcome.of(Code.RELEASED)
          .token(lease.token())
          .message("the grant made while giving up was released")
          .nowMs(nowMs)
          .build();
    }
    return Outcome.of(Code.NOT_FOUND).message("no waiter " + c.requestId()).nowMs(nowMs).build();
  }
}
