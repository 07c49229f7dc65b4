package dev.fencekeeper.core;

import dev.fencekeeper.config.Limits;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The leases of every resource, with their waiters and wake-up index, and the two things leases run
 * on: state-machine time and the group's token sequence. It grants, renews, ends and hands on
 * leases, and settles each resource when its wake-up time comes; the queue's admission is {@link
 * Acquires}, the values a lease protects are {@link FencedValues}. It also keeps the records
 * themselves, because a lease's life decides when a record is created and forgotten.
 */
final class Leases {
  private final Limits limits;
  private final TreeMap<String, ResourceRecord> resources = new TreeMap<>();
  private final WakeupIndex wakeups;
  // Events of the entry being applied, drained by the adapter after each apply.
  private final List<LeaseEvent> events = new ArrayList<>();
  private final TokenSequence tokens = new TokenSequence();
  // Session id -> the resources whose current lease record belongs to it: what a session renewal
  // visits, derived from the lease records (setLease keeps it) and rebuilt with them on restore.
  private final TreeMap<String, TreeSet<String>> sessions = new TreeMap<>();
  private long nowMs;

  Leases(Limits limits) {
    this.limits = limits;
    this.wakeups = new WakeupIndex(limits.idleTimeout().toMillis());
  }

  long nowMs() {
    return nowMs;
  }

  TokenSequence tokens() {
    return tokens;
  }

  /** Read-only view, in name order. */
  NavigableMap<String, ResourceRecord> records() {
    return Collections.unmodifiableNavigableMap(resources);
  }

  /** The record of {@code name}, or null. */
  ResourceRecord record(String name) {
    return resources.get(name);
  }

  int size() {
    return resources.size();
  }

  /** A new, empty record for {@code name}, kept from now on. */
  ResourceRecord create(String name) {
    ResourceRecord r = new ResourceRecord(name);
    resources.put(name, r);
    return r;
  }

  /** The lease events of the last applied entry, in order; clears them. */
  List<LeaseEvent> drainEvents() {
    if (events.isEmpty()) {
      return List.of();
    }
    List<LeaseEvent> drained = List.copyOf(events);
    events.clear();
    return drained;
  }

  long nextWakeupMs() {
    return wakeups.nextWakeupMs();
  }

  /** Files {@code r} under the next time it needs attention. */
  void refile(ResourceRecord r) {
    wakeups.refile(r, nowMs);
  }

  LeaseRecord grant(
      ResourceRecord r,
      String owner,
      long ttlMs,
      String requestId,
      long lockDelayMs,
      String identity,
      String sessionId,
      long entryIndex) {
    long token = tokens.issue(entryIndex);
    LeaseRecord lease =
        new LeaseRecord(
            token, owner, ttlMs, nowMs + ttlMs, false, requestId, lockDelayMs, identity, sessionId);
    r.setLastToken(token);
    setLease(r, lease);
    r.setExpiryObserved(false);
    r.setIdleSinceMs(0);
    r.mutableReceipts().clear();
    events.add(
        LeaseEvent.of(LeaseEvent.Type.ACQUIRED, r.name(), lease, lease.expiresAtMs(), nowMs));
    return lease;
  }

  /** Sets {@code r}'s lease record, keeping the session index in step with it. */
  private void setLease(ResourceRecord r, LeaseRecord lease) {
    LeaseRecord old = r.lease();
    if (old != null && !old.sessionId().isEmpty()) {
      TreeSet<String> of = sessions.get(old.sessionId());
      if (of != null) {
        of.remove(r.name());
        if (of.isEmpty()) {
          sessions.remove(old.sessionId());
        }
      }
    }
    r.setLease(lease);
    if (lease != null && !lease.sessionId().isEmpty()) {
      sessions.computeIfAbsent(lease.sessionId(), id -> new TreeSet<>()).add(r.name());
    }
  }

  /**
   * Renews every live lease of {@code renewal}'s session that its caller may renew (and that it
   * does not leave out), each by its own TTL, in one pass over the session's resources. No event: a
   * session renewal moves deadlines silently, or one keep-alive would flood every watcher with an
   * event per lease.
   */
  Outcome renewSession(Command.RenewSession renewal) {
    TreeSet<String> names = sessions.get(renewal.sessionId());
    int renewed = 0;
    if (names != null) {
      for (String name : names) {
        ResourceRecord r = resources.get(name);
        LeaseRecord live = r == null ? null : r.liveLease(nowMs);
        if (live == null
            || !live.permits(renewal.caller())
            || renewal.exceptTokens().contains(live.token())) {
          continue;
        }
        r.setLease(live.renewedAt(nowMs, live.ttlMs()));
        refile(r);
        renewed++;
      }
    }
    return Outcome.of(Code.RENEWED).renewed(renewed).nowMs(nowMs).build();
  }

  /**
   * Grants the resource to the first waiter whose client is still there, if the resource is free
   * and not in lock-delay. Re-checks that the previous lease is really over at this moment — etcd
   * once granted a queued lock without that check.
   */
  private void grantToNextWaiter(ResourceRecord r, long entryIndex) {
    if (r.liveLease(nowMs) != null || r.blockedUntilMs() > nowMs) {
      return;
    }
    Iterator<Waiter> queue = r.mutableWaiters().values().iterator();
    while (queue.hasNext()) {
      Waiter w = queue.next();
      queue.remove();
      if (w.isAttendedAt(nowMs)) {
        grant(
            r,
            w.owner(),
            w.ttlMs(),
            w.requestId(),
            w.lockDelayMs(),
            w.identity(),
            w.sessionId(),
            entryIndex);
        return;
      }
    }
  }

  Outcome renew(Command.Renew renew) {
    ResourceRecord r = resources.get(renew.resource());
    LeaseRecord live = r == null ? null : r.liveLease(nowMs);
    if (live == null || live.token() != renew.token()) {
      return Answers.rejection(
              nowMs, Code.LEASE_LOST, r, renew.token(), leaseLostReason(r, renew.token()))
          .build();
    }
    if (!live.permits(renew.caller())) {
      return Answers.rejection(
              nowMs,
              Code.PERMISSION_DENIED,
              r,
              renew.token(),
              Answers.notYours(live, renew.caller()))
          .build();
    }
    long ttl = renew.ttlMs() == 0 ? live.ttlMs() : renew.ttlMs();
    LeaseRecord renewed = live.renewedAt(nowMs, ttl);
    r.setLease(renewed);
    refile(r);
    events.add(
        LeaseEvent.of(LeaseEvent.Type.RENEWED, r.name(), renewed, renewed.expiresAtMs(), nowMs));
    return Answers.leaseOutcome(nowMs, Code.RENEWED, r, renewed).build();
  }

  Outcome release(Command.Release release, long entryIndex) {
    ResourceRecord r = resources.get(release.resource());
    if (r == null || release.token() > r.lastToken()) {
      return Answers.rejection(
              nowMs,
              Code.NOT_HOLDER,
              r,
              release.token(),
              "token " + release.token() + " was never issued for '" + release.resource() + "'")
          .build();
    }
    LeaseRecord live = r.liveLease(nowMs);
    if (live != null && live.token() == release.token() && !live.permits(release.caller())) {
      return Answers.rejection(
              nowMs,
              Code.PERMISSION_DENIED,
              r,
              release.token(),
              Answers.notYours(live, release.caller()))
          .build();
    }
    if (live != null && live.token() == release.token()) {
      end(r, LeaseEvent.Type.RELEASED, entryIndex);
      return Outcome.of(Code.RELEASED)
          .token(release.token())
          .currentToken(r.lastToken())
          .nowMs(nowMs)
          .build();
    }
    if (live != null) {
      return Answers.rejection(
              nowMs,
              Code.NOT_HOLDER,
              r,
              release.token(),
              "'"
                  + release.resource()
                  + "' is held by token "
                  + live.token()
                  + " ("
                  + live.owner()
                  + ")")
          .build();
    }
    if (r.lease() != null && r.lease().token() == release.token()) {
      setLease(r, null); // expired already: forget it, as a release would have
      settle(r, entryIndex);
    }
    return Outcome.of(Code.RELEASED)
        .alreadyEnded(true)
        .message("lease " + release.token() + " had already ended")
        .token(release.token())
        .currentToken(r.lastToken())
        .nowMs(nowMs)
        .build();
  }

  Outcome revoke(Command.Revoke revoke, long entryIndex) {
    ResourceRecord r = resources.get(revoke.resource());
    LeaseRecord live = r == null ? null : r.liveLease(nowMs);
    if (live == null) {
      return Outcome.of(Code.NOT_FOUND)
          .message("'" + revoke.resource() + "' has no live lease")
          .currentToken(r == null ? 0 : r.lastToken())
          .nowMs(nowMs)
          .build();
    }
    if (live.lockDelayMs() > 0) {
      r.setBlockedUntilMs(Math.max(r.blockedUntilMs(), nowMs + live.lockDelayMs()));
    }
    end(r, LeaseEvent.Type.REVOKED, entryIndex);
    return Outcome.of(Code.REVOKED)
        .token(live.token())
        .holderOwner(live.owner())
        .currentToken(r.lastToken())
        .message(revoke.reason())
        .nowMs(nowMs)
        .build();
  }

  /** Ends the live lease now (release or revoke), announces it, and hands the resource on. */
  void end(ResourceRecord r, LeaseEvent.Type how, long entryIndex) {
    LeaseRecord lease = r.lease();
    setLease(r, null);
    events.add(LeaseEvent.of(how, r.name(), lease, lease.expiresAtMs(), nowMs));
    settle(r, entryIndex);
  }

  /**
   * Every lease that was live at the last state-machine time before this entry, and has not had a
   * grace since its last renewal, is extended to at least {@code now + min(grace, ttl)}: enough for
   * the holder to renew through the new leader, never more than its own TTL.
   */
  void grace(long previousNow, long now) {
    long graceMs = limits.takeoverGrace().toMillis();
    for (ResourceRecord r : resources.values()) {
      LeaseRecord lease = r.lease();
      if (lease == null || lease.graceUsed() || !lease.isLiveAt(previousNow)) {
        continue;
      }
      long extended = now + Math.min(graceMs, lease.ttlMs());
      if (extended > lease.expiresAtMs()) {
        r.setLease(lease.withExpiry(extended, true));
        refile(r);
      }
    }
  }

  /** Moves time forward to {@code now} and settles every resource whose wake-up time has come. */
  void advanceTime(long now, long entryIndex) {
    nowMs = now;
    for (String due = wakeups.pollDue(nowMs); due != null; due = wakeups.pollDue(nowMs)) {
      ResourceRecord r = resources.get(due);
      if (r != null) {
        r.filedWakeupMs = Long.MAX_VALUE;
        settle(r, entryIndex);
      }
    }
  }

  /**
   * Brings one resource up to date with the current time: announces a lease that has run out
   * (starting its lock-delay), grants the next waiter, forgets the record once it has been empty
   * for the idle timeout, and files its next wake-up.
   */
  void settle(ResourceRecord r, long entryIndex) {
    LeaseRecord lease = r.lease();
    if (lease != null && !lease.isLiveAt(nowMs) && !r.expiryObserved()) {
      r.setExpiryObserved(true);
      events.add(
          LeaseEvent.of(
              LeaseEvent.Type.EXPIRED, r.name(), lease, lease.expiresAtMs(), lease.expiresAtMs()));
      if (lease.lockDelayMs() > 0) {
        r.setBlockedUntilMs(
            Math.max(r.blockedUntilMs(), lease.expiresAtMs() + lease.lockDelayMs()));
      }
    }
    if (!r.waiters().isEmpty()) {
      grantToNextWaiter(r, entryIndex);
    }
    if (r.isEmptyAt(nowMs)) {
      if (r.idleSinceMs() == 0) {
        r.setIdleSinceMs(nowMs);
      } else if (r.idleSinceMs() + limits.idleTimeout().toMillis() <= nowMs) {
        wakeups.remove(r);
        setLease(r, null); // an ended lease's record goes with it, out of its session too
        resources.remove(
            r.name()); // tokens are group-wide: forgetting lastToken lets none go backwards
        return;
      }
    } else {
      r.setIdleSinceMs(0);
    }
    refile(r);
  }

  private String leaseLostReason(ResourceRecord r, long token) {
    if (r == null || token > r.lastToken()) {
      return "token " + token + " was never issued for this resource";
    }
    if (token < r.lastToken()) {
      return "token " + token + " was superseded by " + r.lastToken();
    }
    return tokens.issuedBeforeRestore(token)
        ? Answers.endedByRestore(token, r.name())
        : "lease " + token + " has ended";
  }

  /** Starts from an image's clock and token sequence; add its resources with restore. */
  void restoreClock(long nowMs, long lastIssuedToken, long lineage) {
    this.nowMs = nowMs;
    tokens.restore(lastIssuedToken, lineage);
  }

  void restore(StateImage.Resource image) {
    ResourceRecord r = new ResourceRecord(image.name());
    for (Waiter w : image.waiters()) {
      r.mutableWaiters().put(w.requestId(), w);
    }
    r.setBlockedUntilMs(image.blockedUntilMs());
    r.setExpiryObserved(image.expiryObserved());
    r.setIdleSinceMs(image.idleSinceMs());
    r.setLastToken(image.lastToken());
    setLease(r, image.lease());
    r.mutableValues().putAll(image.values());
    for (WriteReceipt receipt : image.receipts()) {
      // Unbounded here: the image holds what the limit allowed when it was taken; the next write
      // trims.
      r.mutableReceipts()
          .put(
              receipt.requestId(),
              receipt.firstKey(),
              receipt.version(),
              receipt.writtenAtMs(),
              Integer.MAX_VALUE);
    }
    resources.put(image.name(), r);
    refile(r);
    tokens.raiseFloor(image.lastToken());
  }

  /**
   * Begins the new cluster of {@link FencingState#beginNewEpoch}: tokens start the next epoch, the
   * lineage is the seed's, and every lease and waiter of the old cluster is gone, without events.
   */
  void beginNewEpoch(long seedLineage) {
    tokens.beginNewEpoch(seedLineage);
    for (ResourceRecord r : List.copyOf(resources.values())) {
      setLease(r, null);
      r.setExpiryObserved(false);
      r.mutableWaiters().clear();
      // No lease and no waiters: only idleness and the next wake-up are brought up to date.
      settle(r, 0);
    }
    events.clear();
  }
}
