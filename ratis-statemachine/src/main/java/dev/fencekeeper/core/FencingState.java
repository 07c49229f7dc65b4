package dev.fencekeeper.core;

import dev.fencekeeper.config.Limits;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * The replicated state of fencekeeper and every transition of it: leases with fencing tokens, and
 * the values those leases protect, each with the highest token it accepted.
 *
 * <p>Deterministic by construction: no clock, no randomness, no I/O, ordered maps only. Time is the
 * leader's stamp carried in each log entry, clamped so it never runs backwards ({@code now =
 * max(now, stamp)}); tokens come from one group-wide sequence tied to the log index. Replaying the
 * same entries on any replica yields the same state. Not thread-safe: the Ratis adapter serialises
 * access.
 *
 * <p>The guarantee this class exists for: a write is accepted only with the live lease's token, and
 * a token, once superseded, is rejected forever, because tokens only grow.
 */
public final class FencingState {
  private final Limits limits;
  private final Validation validation;
  private final TreeMap<String, ResourceRecord> resources = new TreeMap<>();
  // When each resource next needs attention (a lease falls due, a lock-delay ends, an idle record
  // may be
  // forgotten), earliest first. The leader commits a tick when the first one passes; every replica
  // then
  // settles the due resources in the same entry.
  private final TreeSet<Wakeup> wakeups = new TreeSet<>();
  // Events of the entry being applied, drained by the adapter after each apply.
  private final List<LeaseEvent> events = new ArrayList<>();
  private long nowMs;
  private long lastIssuedToken;
  private long term;
  private long lineage;
  // TEST ONLY: a deliberately broken build for the drills, whose checker must then fail. Never set
  // in production.
  private boolean fencingCheckSkipped;

  public FencingState(Limits limits) {
    this.limits = limits;
    this.validation = new Validation(limits);
  }

  public Limits limits() {
    return limits;
  }

  /**
   * TEST ONLY, UNSAFE: accepts writes with any issued token, live or not, stale or not. Exists so
   * that a drill can prove its history checker catches a build that lost the fencing check.
   */
  public void skipFencingCheckUnsafely() {
    fencingCheckSkipped = true;
  }

  /** State-machine time: the highest leader stamp applied so far. */
  public long nowMs() {
    return nowMs;
  }

  /** The highest token this group has issued, for any resource. */
  public long lastIssuedToken() {
    return lastIssuedToken;
  }

  /** The Raft term of the last applied entry (0 when applied without terms, as in unit tests). */
  public long term() {
    return term;
  }

  /**
   * Which starting state this replica applies its log to: 0 for a cluster that began empty,
   * otherwise the fingerprint of the restore seed the cluster began from. Every replica of one
   * cluster has the same lineage for its whole life; see {@link Command.Takeover}.
   */
  public long lineage() {
    return lineage;
  }

  /** Read-only view, in name order, for snapshots and listings. */
  public NavigableMap<String, ResourceRecord> resources() {
    return Collections.unmodifiableNavigableMap(resources);
  }

  /** Returns null when {@code command} is well-formed, else why not. Never changes state. */
  public String validate(Command command) {
    return validation.check(command);
  }

  /**
   * Applies one committed command. {@code entryIndex} is the log index of the entry carrying it and
   * {@code stampMs} the leader's clock when it accepted the request. Never throws for any input; a
   * rejected command leaves the state exactly as it was (time aside, which only moves forward).
   */
  public Outcome apply(Command command, long entryIndex, long stampMs) {
    return apply(command, term, entryIndex, stampMs);
  }

  /**
   * As {@link #apply(Command, long, long)}, for an entry of Raft term {@code entryTerm}. The first
   * entry of a newer term is preceded by the takeover grace, so no client command of a new leader
   * is ever judged before the grace — even when it reaches the log ahead of the leader's own
   * takeover entry.
   */
  public Outcome apply(Command command, long entryTerm, long entryIndex, long stampMs) {
    if (command instanceof Command.Takeover t
        && t.lineage().isPresent()
        && t.lineage().getAsLong() != lineage) {
      throw new ReplicaDivergedException(entryIndex, t.lineage().getAsLong(), lineage);
    }
    long previousNow = nowMs;
    long now = Math.max(nowMs, stampMs);
    boolean newTerm = entryTerm > term;
    if (newTerm) {
      term = entryTerm;
    }
    // The grace is judged against the time before this entry, before anything falls due at its
    // stamp:
    // a lease that was live when the old leader last spoke must not be expired by the election's
    // gap.
    if (newTerm || command instanceof Command.Takeover) {
      grace(previousNow, now);
    }
    advanceTime(now, entryIndex);
    if (command instanceof Command.Batch) {
      // Its commands need answers of their own: applyBatch. Refused here so a caller's slip is not
      // a crash.
      return Outcome.of(Code.INVALID_ARGUMENT)
          .message("batch: apply it with applyBatch")
          .nowMs(nowMs)
          .build();
    }
    String invalid = validation.check(command);
    if (invalid != null) {
      return Outcome.of(Code.INVALID_ARGUMENT).message(invalid).nowMs(nowMs).build();
    }
    if (command instanceof Command.Acquire a) {
      return acquire(a, entryIndex);
    }
    if (command instanceof Command.Renew r) {
      return renew(r);
    }
    if (command instanceof Command.Release r) {
      return release(r, entryIndex);
    }
    if (command instanceof Command.Write w) {
      return write(w);
    }
    if (command instanceof Command.CancelWait c) {
      return cancelWait(c, entryIndex);
    }
    if (command instanceof Command.Revoke r) {
      return revoke(r, entryIndex);
    }
    return Outcome.of(Code.OK).nowMs(nowMs).build(); // Tick, Takeover: their work is done above
  }

  /**
   * Applies a committed {@link Command.Batch}: each command in order, at the entry's index and
   * stamp, through {@link #apply(Command, long, long, long)}, so each is judged and answered
   * exactly as if it had been alone in an entry of its own (tokens stay strictly increasing:
   * several grants in one entry take consecutive values). One command's rejection does not affect
   * the others. A batch that is malformed as a whole (too many commands, one that may not be
   * batched) changes nothing but time and answers every command INVALID_ARGUMENT. {@code around}
   * wraps each command's apply, for metrics; it must call the supplier once and return its outcome.
   */
  public List<Outcome> applyBatch(
      Command.Batch batch,
      long entryTerm,
      long entryIndex,
      long stampMs,
      BiFunction<Command, Supplier<Outcome>, Outcome> around) {
    String invalid = validation.check(batch);
    if (invalid != null) {
      apply(new Command.Tick(), entryTerm, entryIndex, stampMs);
      Outcome rejected = Outcome.of(Code.INVALID_ARGUMENT).message(invalid).nowMs(nowMs).build();
      return Collections.nCopies(batch.commands().size(), rejected);
    }
    List<Outcome> outcomes = new ArrayList<>(batch.commands().size());
    for (Command command : batch.commands()) {
      outcomes.add(around.apply(command, () -> apply(command, entryTerm, entryIndex, stampMs)));
    }
    return outcomes;
  }

  /** As {@link #applyBatch(Command.Batch, long, long, long, BiFunction)} without a wrapper. */
  public List<Outcome> applyBatch(Command.Batch batch, long entryIndex, long stampMs) {
    return applyBatch(batch, term, entryIndex, stampMs, (command, run) -> run.get());
  }

  /** The lease events of the last applied entry, in order; clears them. */
  public List<LeaseEvent> drainEvents() {
    if (events.isEmpty()) {
      return List.of();
    }
    List<LeaseEvent> drained = List.copyOf(events);
    events.clear();
    return drained;
  }

  private Outcome acquire(Command.Acquire a, long entryIndex) {
    ResourceRecord r = resources.get(a.resource());
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
        return leaseOutcome(Code.GRANTED, r, mine).live(mine.isLiveAt(nowMs)).build();
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
                queued.identity());
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
        if (resources.size() >= limits.maxResources()) {
          return Outcome.of(Code.OVERLOADED)
              .message(
                  "the cluster already keeps "
                      + resources.size()
                      + " resources (limits.resources.max); release some or retry once idle ones"
                      + " are forgotten")
              .nowMs(nowMs)
              .build();
        }
        r = new ResourceRecord(a.resource());
        resources.put(a.resource(), r);
      }
      LeaseRecord lease =
          grant(r, a.owner(), a.ttlMs(), a.requestId(), a.lockDelayMs(), a.caller(), entryIndex);
      refile(r);
      return leaseOutcome(Code.GRANTED, r, lease).build();
    }
    if (a.waitMs() > 0) {
      if (r.waiters().size() >= limits.maxWaitersPerResource()) {
        return rejection(
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
                  a.caller()));
      refile(r);
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
    return rejection(
            Code.HELD, r, 0, queuedAhead + " waiter(s) are queued for '" + a.resource() + "'")
        .build();
  }

  private Outcome waiting(ResourceRecord r, String requestId, long entryIndex) {
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
    int n = 0;
    for (Waiter w : r.waiters().values()) {
      if (w.isAttendedAt(nowMs)) {
        n++;
      }
    }
    return n;
  }

  private LeaseRecord grant(
      ResourceRecord r,
      String owner,
      long ttlMs,
      String requestId,
      long lockDelayMs,
      String identity,
      long entryIndex) {
    long token = issueToken(entryIndex);
    LeaseRecord lease =
        new LeaseRecord(
            token, owner, ttlMs, nowMs + ttlMs, false, requestId, lockDelayMs, identity);
    r.setLastToken(token);
    setLease(r, lease);
    r.setExpiryObserved(false);
    r.setIdleSinceMs(0);
    r.mutableReceipts().clear();
    events.add(
        new LeaseEvent(
            LeaseEvent.Type.ACQUIRED,
            r.name(),
            token,
            owner,
            lease.expiresAtMs(),
            nowMs,
            requestId));
    return lease;
  }

  /**
   * Grants the resource to the first waiter whose client is still there, if the resource is free
   * and not in lock-delay. Re-checks that the previous lease is really over at this moment — etcd
   * once granted a queued lock without that check (etcd issue 11456).
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
        grant(r, w.owner(), w.ttlMs(), w.requestId(), w.lockDelayMs(), w.identity(), entryIndex);
        return;
      }
    }
  }

  /**
   * Tokens follow the log index, so they need no state of their own in a normal cluster; the max
   * with the last issued token keeps them strictly increasing even when a restored cluster's log
   * starts over.
   */
  private long issueToken(long entryIndex) {
    lastIssuedToken = Math.max(lastIssuedToken + 1, entryIndex);
    return lastIssuedToken;
  }

  private Outcome renew(Command.Renew renew) {
    ResourceRecord r = resources.get(renew.resource());
    LeaseRecord live = r == null ? null : r.liveLease(nowMs);
    if (live == null || live.token() != renew.token()) {
      return rejection(Code.LEASE_LOST, r, renew.token(), leaseLostReason(r, renew.token()))
          .build();
    }
    if (!live.permits(renew.caller())) {
      return rejection(Code.PERMISSION_DENIED, r, renew.token(), notYours(live, renew.caller()))
          .build();
    }
    long ttl = renew.ttlMs() == 0 ? live.ttlMs() : renew.ttlMs();
    LeaseRecord renewed =
        new LeaseRecord(
            live.token(),
            live.owner(),
            ttl,
            nowMs + ttl,
            false,
            live.requestId(),
            live.lockDelayMs(),
            live.identity());
    setLease(r, renewed);
    refile(r);
    events.add(
        new LeaseEvent(
            LeaseEvent.Type.RENEWED,
            r.name(),
            live.token(),
            live.owner(),
            renewed.expiresAtMs(),
            nowMs));
    return leaseOutcome(Code.RENEWED, r, renewed).build();
  }

  private Outcome release(Command.Release release, long entryIndex) {
    ResourceRecord r = resources.get(release.resource());
    if (r == null || release.token() > r.lastToken()) {
      return rejection(
              Code.NOT_HOLDER,
              r,
              release.token(),
              "token " + release.token() + " was never issued for '" + release.resource() + "'")
          .build();
    }
    LeaseRecord live = r.liveLease(nowMs);
    if (live != null && live.token() == release.token() && !live.permits(release.caller())) {
      return rejection(Code.PERMISSION_DENIED, r, release.token(), notYours(live, release.caller()))
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
      return rejection(
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

  private Outcome write(Command.Write w) {
    ResourceRecord r = resources.get(w.resource());
    if (r == null || w.token() > r.lastToken()) {
      return rejection(
              Code.UNKNOWN_TOKEN,
              r,
              w.token(),
              "token " + w.token() + " was never issued for '" + w.resource() + "'")
          .build();
    }
    if (!w.requestId().isEmpty() && w.token() == r.lastToken()) {
      WriteReceipt receipt = r.receipt(w.requestId());
      if (receipt != null) {
        // A retry of a write that was applied: answer as the first time did, change nothing.
        return Outcome.of(Code.ACCEPTED)
            .message("request " + w.requestId() + " was already applied")
            .token(w.token())
            .currentToken(r.lastToken())
            .acceptedToken(w.token())
            .key(receipt.firstKey())
            .version(receipt.version())
            .writtenAtMs(receipt.writtenAtMs())
            .nowMs(nowMs)
            .facts(new Outcome.Facts(true, false, 0, 0))
            .build();
      }
    }
    if (w.token() < r.lastToken() && !fencingCheckSkipped) {
      return rejection(
              Code.STALE_TOKEN,
              r,
              w.token(),
              "token " + w.token() + " is stale: '" + w.resource() + "' has token " + r.lastToken())
          .build();
    }
    LeaseRecord live = r.liveLease(nowMs);
    if (live == null && !fencingCheckSkipped) {
      return rejection(
              Code.LEASE_EXPIRED,
              r,
              w.token(),
              issuedBeforeRestore(w.token())
                  ? endedByRestore(w.token(), w.resource())
                  : "lease " + w.token() + " on '" + w.resource() + "' has ended")
          .build();
    }
    if (live != null && live.token() == w.token() && !live.permits(w.caller())) {
      return rejection(Code.PERMISSION_DENIED, r, w.token(), notYours(live, w.caller())).build();
    }
    for (Command.KeyWrite kw : w.writes()) {
      ValueRecord existing = r.values().get(kw.key());
      if (existing != null && existing.acceptedToken() > w.token() && !fencingCheckSkipped) {
        return rejection(
                Code.STALE_TOKEN,
                r,
                w.token(),
                "key '" + kw.key() + "' accepted token " + existing.acceptedToken())
            .key(kw.key())
            .acceptedToken(existing.acceptedToken())
            .build();
      }
    }
    int newKeys = 0;
    for (Command.KeyWrite kw : w.writes()) {
      newKeys +=
          kw.delete()
              ? (r.values().containsKey(kw.key()) ? -1 : 0)
              : (r.values().containsKey(kw.key()) ? 0 : 1);
    }
    if (r.values().size() + newKeys > limits.maxKeysPerResource()) {
      return rejection(
              Code.INVALID_ARGUMENT,
              r,
              w.token(),
              "'"
                  + w.resource()
                  + "' would hold "
                  + (r.values().size() + newKeys)
                  + " keys; limits.keys-per-resource.max is "
                  + limits.maxKeysPerResource())
          .build();
    }
    // Every check passed: change all keys together.
    long firstVersion = 0;
    long keysDelta = 0;
    long bytesDelta = 0;
    for (Command.KeyWrite kw : w.writes()) {
      ValueRecord existing = r.values().get(kw.key());
      long version = (existing == null ? 0 : existing.version()) + 1;
      if (existing != null) {
        keysDelta--;
        bytesDelta -= existing.value().length;
      }
      if (kw.delete()) {
        r.mutableValues().remove(kw.key());
      } else {
        r.mutableValues().put(kw.key(), new ValueRecord(kw.value(), w.token(), version, nowMs));
        keysDelta++;
        bytesDelta += kw.value().length;
      }
      if (firstVersion == 0) {
        firstVersion = version;
      }
    }
    String firstKey = w.writes().get(0).key();
    if (!w.requestId().isEmpty()) {
      r.mutableReceipts()
          .put(w.requestId(), firstKey, firstVersion, nowMs, limits.maxRequestIdsPerLease());
    }
    return Outcome.of(Code.ACCEPTED)
        .token(w.token())
        .currentToken(r.lastToken())
        .acceptedToken(w.token())
        .key(firstKey)
        .version(firstVersion)
        .writtenAtMs(nowMs)
        .holderOwner(live == null ? "" : live.owner())
        .expiresAtMs(live == null ? 0 : live.expiresAtMs())
        .nowMs(nowMs)
        .facts(new Outcome.Facts(false, false, keysDelta, bytesDelta))
        .build();
  }

  private static String notYours(LeaseRecord lease, String caller) {
    return "lease "
        + lease.token()
        + " was acquired by identity '"
        + lease.identity()
        + "', not '"
        + caller
        + "'";
  }

  /**
   * Every lease that was live at the last state-machine time before this entry, and has not had a
   * grace since its last renewal, is extended to at least {@code now + min(grace, ttl)}: enough for
   * the holder to renew through the new leader, never more than its own TTL.
   */
  private void grace(long previousNow, long now) {
    long graceMs = limits.takeoverGrace().toMillis();
    for (ResourceRecord r : resources.values()) {
      LeaseRecord lease = r.lease();
      if (lease == null || lease.graceUsed() || !lease.isLiveAt(previousNow)) {
        continue;
      }
      long extended = now + Math.min(graceMs, lease.ttlMs());
      if (extended > lease.expiresAtMs()) {
        setLease(r, lease.withExpiry(extended, true));
        refile(r);
      }
    }
  }

  private Outcome cancelWait(Command.CancelWait c, long entryIndex) {
    ResourceRecord r = resources.get(c.resource());
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
      settle(r, entryIndex);
      return Outcome.of(Code.OK).message("no longer waiting").nowMs(nowMs).build();
    }
    LeaseRecord lease = r.liveLease(nowMs);
    if (lease != null && lease.requestId().equals(c.requestId())) {
      // Granted while its client was giving up: nobody will use it, so it must not block the
      // others.
      end(r, LeaseEvent.Type.RELEASED, entryIndex);
      return Outcome.of(Code.RELEASED)
          .token(lease.token())
          .message("the grant made while giving up was released")
          .nowMs(nowMs)
          .build();
    }
    return Outcome.of(Code.NOT_FOUND).message("no waiter " + c.requestId()).nowMs(nowMs).build();
  }

  private Outcome revoke(Command.Revoke revoke, long entryIndex) {
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
  private void end(ResourceRecord r, LeaseEvent.Type how, long entryIndex) {
    LeaseRecord lease = r.lease();
    setLease(r, null);
    events.add(
        new LeaseEvent(how, r.name(), lease.token(), lease.owner(), lease.expiresAtMs(), nowMs));
    settle(r, entryIndex);
  }

  /**
   * The answer apply would certainly give {@code w}, if it is a rejection that no later entry can
   * undo: malformed input, or a token already superseded. Tokens only grow, so a token stale now is
   * stale at any later index and the leader may refuse it without spending a log entry. Returns
   * null when the write has to go through the log. Never changes state.
   */
  public Outcome permanentRejection(Command.Write w) {
    String invalid = validation.check(w);
    if (invalid != null) {
      return Outcome.invalid(invalid);
    }
    ResourceRecord r = resources.get(w.resource());
    if (r != null && w.token() < r.lastToken() && !fencingCheckSkipped) {
      return rejection(
              Code.STALE_TOKEN,
              r,
              w.token(),
              "token " + w.token() + " is stale: '" + w.resource() + "' has token " + r.lastToken())
          .build();
    }
    return null;
  }

  /**
   * The answer the leader gives {@code command} without a log entry, or null when it must go
   * through the log: a write's {@link #permanentRejection}, or INVALID_ARGUMENT for any other
   * malformed command. Both are final, so answering before the log is safe: input does not become
   * well-formed later, and a token stale at this state is stale at every later index. A batch is
   * judged here as a whole (its size, what it may carry); each of its commands, by this same rule,
   * on its own. Never changes state.
   */
  public Outcome refusalBeforeLog(Command command) {
    if (command instanceof Command.Write w) {
      return permanentRejection(w);
    }
    String invalid = validation.check(command);
    return invalid == null ? null : Outcome.invalid(invalid);
  }

  // ---------------------------------------------------------------------------------------------
  // Queries: read-only, answered at the current state-machine time.

  public Outcome read(String resource, String key) {
    String invalid = first(validation.resource(resource), validation.key(key));
    if (invalid != null) {
      return Outcome.invalid(invalid);
    }
    ResourceRecord r = resources.get(resource);
    ValueRecord v = r == null ? null : r.values().get(key);
    if (v == null) {
      return Outcome.of(Code.NOT_FOUND)
          .message("no value for '" + key + "' in '" + resource + "'")
          .currentToken(r == null ? 0 : r.lastToken())
          .key(key)
          .nowMs(nowMs)
          .build();
    }
    return Outcome.of(Code.FOUND)
        .value(v.value())
        .acceptedToken(v.acceptedToken())
        .version(v.version())
        .writtenAtMs(v.writtenAtMs())
        .currentToken(r.lastToken())
        .key(key)
        .nowMs(nowMs)
        .build();
  }

  public Outcome lease(String resource) {
    String invalid = validation.resource(resource);
    if (invalid != null) {
      return Outcome.invalid(invalid);
    }
    ResourceRecord r = resources.get(resource);
    if (r == null) {
      return Outcome.of(Code.NOT_FOUND)
          .message("'" + resource + "' has never been leased")
          .nowMs(nowMs)
          .build();
    }
    LeaseRecord live = r.liveLease(nowMs);
    if (live == null) {
      return Outcome.of(Code.FOUND).currentToken(r.lastToken()).live(false).nowMs(nowMs).build();
    }
    return leaseOutcome(Code.FOUND, r, live).live(true).build();
  }

  public Outcome validateToken(String resource, long token) {
    String invalid = first(validation.resource(resource), validation.token(token));
    if (invalid != null) {
      return Outcome.invalid(invalid);
    }
    ResourceRecord r = resources.get(resource);
    if (r == null || token > r.lastToken()) {
      return rejection(
              Code.UNKNOWN_TOKEN,
              r,
              token,
              "token " + token + " was never issued for '" + resource + "'")
          .build();
    }
    if (token < r.lastToken()) {
      return rejection(Code.STALE, r, token, "a newer token " + r.lastToken() + " exists").build();
    }
    LeaseRecord live = r.liveLease(nowMs);
    if (live == null) {
      return rejection(Code.EXPIRED, r, token, "lease " + token + " has ended").build();
    }
    return leaseOutcome(Code.CURRENT, r, live).sentToken(token).build();
  }

  /**
   * Up to {@code limit} resources whose name starts with {@code prefix}, after {@code after} in
   * name order (empty: from the start). Read-only views, valid while the caller holds the state's
   * read lock.
   */
  public List<ResourceRecord> listResources(String prefix, String after, int limit) {
    return new ArrayList<>(page(resources, prefix, after, limit).values());
  }

  /**
   * Up to {@code limit} keys of {@code resource} starting with {@code prefix}, after {@code after}.
   */
  public List<Map.Entry<String, ValueRecord>> listKeys(
      String resource, String prefix, String after, int limit) {
    ResourceRecord r = resources.get(resource);
    return r == null
        ? List.of()
        : new ArrayList<>(page(r.values(), prefix, after, limit).entrySet());
  }

  private static <V> NavigableMap<String, V> page(
      NavigableMap<String, V> all, String prefix, String after, int limit) {
    boolean fromPrefix = after.isEmpty() || after.compareTo(prefix) < 0;
    TreeMap<String, V> page = new TreeMap<>();
    for (Map.Entry<String, V> e : all.tailMap(fromPrefix ? prefix : after, fromPrefix).entrySet()) {
      if (!e.getKey().startsWith(prefix) || page.size() >= limit) {
        break;
      }
      page.put(e.getKey(), e.getValue());
    }
    return page;
  }

  // ---------------------------------------------------------------------------------------------
  // Restoring from a snapshot.

  /**
   * Starts a state from a snapshot's clock and token sequence; add resources with {@link #restore}.
   */
  public static FencingState restored(Limits limits, long nowMs, long lastIssuedToken) {
    return restored(limits, 0, nowMs, lastIssuedToken);
  }

  public static FencingState restored(Limits limits, long term, long nowMs, long lastIssuedToken) {
    return restored(limits, term, nowMs, lastIssuedToken, 0);
  }

  public static FencingState restored(
      Limits limits, long term, long nowMs, long lastIssuedToken, long lineage) {
    FencingState s = new FencingState(limits);
    s.lineage = lineage;
    s.term = term;
    s.nowMs = nowMs;
    s.lastIssuedToken = lastIssuedToken;
    return s;
  }

  public void restore(
      String name,
      long lastToken,
      LeaseRecord lease,
      Map<String, ValueRecord> values,
      List<WriteReceipt> receipts) {
    restore(name, lastToken, lease, values, receipts, List.of(), 0, false, 0);
  }

  /** Adds one resource from a snapshot, queue and lock-delay included. */
  public void restore(
      String name,
      long lastToken,
      LeaseRecord lease,
      Map<String, ValueRecord> values,
      List<WriteReceipt> receipts,
      List<Waiter> waiters,
      long blockedUntilMs,
      boolean expiryObserved,
      long idleSinceMs) {
    ResourceRecord r = new ResourceRecord(name);
    for (Waiter w : waiters) {
      r.mutableWaiters().put(w.requestId(), w);
    }
    r.setBlockedUntilMs(blockedUntilMs);
    r.setExpiryObserved(expiryObserved);
    r.setIdleSinceMs(idleSinceMs);
    r.setLastToken(lastToken);
    setLease(r, lease);
    r.mutableValues().putAll(values);
    for (WriteReceipt receipt : receipts) {
      // Unbounded here: the snapshot holds what the limit allowed when it was taken; the next write
      // trims.
      r.mutableReceipts()
          .put(
              receipt.requestId(),
              receipt.firstKey(),
              receipt.version(),
              receipt.writtenAtMs(),
              Integer.MAX_VALUE);
    }
    resources.put(name, r);
    refile(r);
    lastIssuedToken = Math.max(lastIssuedToken, lastToken);
  }

  /** Tokens are grouped in epochs of 2^40: a restored state starts the epoch after its own. */
  public static final int TOKEN_EPOCH_BITS = 40;

  /**
   * Makes this state (loaded from a backup) the start of a new cluster: the next token starts a new
   * epoch, so it exceeds every token the backed-up cluster issued — including the ones it issued
   * after the backup was taken, which the backup cannot know (unless it issued 2^40, a trillion,
   * more) — and the Raft term starts over with the new cluster's log. {@code seedLineage}
   * (non-zero, the same on every node seeded from this backup) becomes the new cluster's {@link
   * #lineage()}.
   *
   * <p>No lease of the old cluster survives: the backup cannot know which of its live leases the
   * old cluster ended afterwards, so keeping them would let a holder that had been fenced out write
   * again with its old token. Every lease ends here, without an event (this is the new cluster's
   * starting state, not an entry of its log) and without starting a lock-delay, so holders acquire
   * again at once and get tokens above the new floor; until they do, a write with an old token is
   * {@code LEASE_EXPIRED}, after that {@code STALE_TOKEN}. Waiters are dropped too: they wait for
   * acquires sent to the old cluster, and granting them would hand a lease to a client not asking
   * this one. Values, write receipts and lock-delays running at backup time are kept (a lock-delay
   * ends at the state-machine time it would have).
   */
  public void beginNewEpoch(long seedLineage) {
    if (seedLineage == 0) {
      throw new IllegalArgumentException(
          "a restored cluster's lineage must not be 0, the lineage of an empty start");
    }
    lastIssuedToken = nextEpochFloor(lastIssuedToken);
    term = 0;
    lineage = seedLineage;
    for (ResourceRecord r : List.copyOf(resources.values())) {
      setLease(r, null);
      r.setExpiryObserved(false);
      r.mutableWaiters().clear();
      settle(
          r,
          0); // no lease and no waiters: only idleness and the next wake-up are brought up to date
    }
    events.clear();
  }

  /**
   * True when {@code token} belongs to an earlier token epoch than this state's: it was issued by a
   * cluster this one was restored from, and its lease ended with the restore.
   */
  private boolean issuedBeforeRestore(long token) {
    return lineage != 0 && (token >>> TOKEN_EPOCH_BITS) < (lastIssuedToken >>> TOKEN_EPOCH_BITS);
  }

  private String endedByRestore(long token, String resource) {
    return "lease "
        + token
        + " on '"
        + resource
        + "' ended when this cluster was restored from a backup;"
        + " tokens issued before the restore are no longer accepted: acquire '"
        + resource
        + "' again";
  }

  /**
   * Where the token sequence of a cluster restored from a state with {@code lastIssuedToken}
   * starts.
   */
  public static long nextEpochFloor(long lastIssuedToken) {
    return ((lastIssuedToken >>> TOKEN_EPOCH_BITS) + 1) << TOKEN_EPOCH_BITS;
  }

  /** Raises the token sequence so that every later token exceeds {@code floor}; never lowers it. */
  public void raiseTokenFloor(long floor) {
    lastIssuedToken = Math.max(lastIssuedToken, floor);
  }

  // ---------------------------------------------------------------------------------------------

  /** Moves time forward to {@code now} and settles every resource whose wake-up time has come. */
  private void advanceTime(long now, long entryIndex) {
    nowMs = now;
    while (!wakeups.isEmpty() && wakeups.first().atMs() <= nowMs) {
      Wakeup due = wakeups.pollFirst();
      ResourceRecord r = resources.get(due.resource());
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
  private void settle(ResourceRecord r, long entryIndex) {
    LeaseRecord lease = r.lease();
    if (lease != null && !lease.isLiveAt(nowMs) && !r.expiryObserved()) {
      r.setExpiryObserved(true);
      events.add(
          new LeaseEvent(
              LeaseEvent.Type.EXPIRED,
              r.name(),
              lease.token(),
              lease.owner(),
              lease.expiresAtMs(),
              lease.expiresAtMs()));
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
        unfile(r);
        resources.remove(
            r.name()); // tokens are group-wide: forgetting lastToken lets none go backwards
        return;
      }
    } else {
      r.setIdleSinceMs(0);
    }
    refile(r);
  }

  private void setLease(ResourceRecord r, LeaseRecord lease) {
    r.setLease(lease);
  }

  /** Files {@code r} under the next time it needs attention, replacing its previous filing. */
  private void refile(ResourceRecord r) {
    long at = Long.MAX_VALUE;
    LeaseRecord lease = r.lease();
    if (lease != null && (lease.isLiveAt(nowMs) || !r.expiryObserved())) {
      at = lease.expiresAtMs();
    }
    if (r.blockedUntilMs() > nowMs && !r.waiters().isEmpty()) {
      at = Math.min(at, r.blockedUntilMs());
    }
    if (r.idleSinceMs() != 0) {
      at = Math.min(at, r.idleSinceMs() + limits.idleTimeout().toMillis());
    }
    if (at == r.filedWakeupMs) {
      return;
    }
    unfile(r);
    if (at != Long.MAX_VALUE) {
      wakeups.add(new Wakeup(at, r.name()));
      r.filedWakeupMs = at;
    }
  }

  private void unfile(ResourceRecord r) {
    if (r.filedWakeupMs != Long.MAX_VALUE) {
      wakeups.remove(new Wakeup(r.filedWakeupMs, r.name()));
      r.filedWakeupMs = Long.MAX_VALUE;
    }
  }

  /**
   * The earliest time at which some resource needs attention (a lease falls due, a lock-delay ends,
   * an idle record may go); Long.MAX_VALUE when none. The leader commits a tick once its clock
   * passes it.
   */
  public long nextWakeupMs() {
    return wakeups.isEmpty() ? Long.MAX_VALUE : wakeups.first().atMs();
  }

  private record Wakeup(long atMs, String resource) implements Comparable<Wakeup> {
    @Override
    public int compareTo(Wakeup o) {
      int c = Long.compare(atMs, o.atMs);
      return c != 0 ? c : resource.compareTo(o.resource);
    }
  }

  private Outcome.Builder leaseOutcome(Code code, ResourceRecord r, LeaseRecord lease) {
    return Outcome.of(code)
        .token(lease.token())
        .currentToken(r.lastToken())
        .holderOwner(lease.owner())
        .expiresAtMs(lease.expiresAtMs())
        .ttlMs(lease.ttlMs())
        .live(true)
        .nowMs(nowMs);
  }

  /** A rejection names the token sent, the newest token, and the live holder if there is one. */
  private Outcome.Builder rejection(Code code, ResourceRecord r, long sentToken, String message) {
    Outcome.Builder b = Outcome.of(code).message(message).sentToken(sentToken).nowMs(nowMs);
    if (r != null) {
      b.currentToken(r.lastToken());
      LeaseRecord live = r.liveLease(nowMs);
      if (live != null) {
        b.holderOwner(live.owner()).expiresAtMs(live.expiresAtMs()).token(live.token());
      }
    }
    return b;
  }

  private String leaseLostReason(ResourceRecord r, long token) {
    if (r == null || token > r.lastToken()) {
      return "token " + token + " was never issued for this resource";
    }
    if (token < r.lastToken()) {
      return "token " + token + " was superseded by " + r.lastToken();
    }
    return issuedBeforeRestore(token)
        ? endedByRestore(token, r.name())
        : "lease " + token + " has ended";
  }

  private static String first(String a, String b) {
    return a != null ? a : b;
  }

  /** For tests and diagnostics: the resources whose lease is live now. */
  public Collection<ResourceRecord> liveResources() {
    return resources.values().stream().filter(r -> r.liveLease(nowMs) != null).toList();
  }
}
