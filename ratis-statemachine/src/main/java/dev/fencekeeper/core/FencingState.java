package dev.fencekeeper.core;

import dev.fencekeeper.config.Limits;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The replicated state of fencekeeper and every transition of it: leases with fencing tokens, and the
 * values those leases protect, each with the highest token it accepted.
 *
 * <p>Deterministic by construction: no clock, no randomness, no I/O, ordered maps only. Time is the
 * leader's stamp carried in each log entry, clamped so it never runs backwards ({@code now = max(now,
 * stamp)}); tokens come from one group-wide sequence tied to the log index. Replaying the same entries
 * on any replica yields the same state. Not thread-safe: the Ratis adapter serialises access.
 *
 * <p>The guarantee this class exists for: a write is accepted only with the live lease's token, and a
 * token, once superseded, is rejected forever, because tokens only grow.
 */
public final class FencingState {
  private final Limits limits;
  private final Validation validation;
  private final TreeMap<String, ResourceRecord> resources = new TreeMap<>();
  // Deadlines of leases live at `nowMs`, earliest first, so the leader knows when to commit a tick.
  private final TreeSet<Deadline> deadlines = new TreeSet<>();
  private long nowMs;
  private long lastIssuedToken;
  private long term;

  public FencingState(Limits limits) {
    this.limits = limits;
    this.validation = new Validation(limits);
  }

  public Limits limits() {
    return limits;
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
   * As {@link #apply(Command, long, long)}, for an entry of Raft term {@code entryTerm}. The first entry
   * of a newer term is preceded by the takeover grace, so no client command of a new leader is ever
   * judged before the grace — even when it reaches the log ahead of the leader's own takeover entry.
   */
  public Outcome apply(Command command, long entryTerm, long entryIndex, long stampMs) {
    long previousNow = nowMs;
    advanceTime(stampMs);
    if (entryTerm > term) {
      term = entryTerm;
      if (!(command instanceof Command.Takeover)) {
        takeover(previousNow);
      }
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
      return release(r);
    }
    if (command instanceof Command.Write w) {
      return write(w);
    }
    if (command instanceof Command.Takeover) {
      return takeover(previousNow);
    }
    return Outcome.of(Code.OK).nowMs(nowMs).build(); // Tick: time has moved, nothing else to do
  }

  private Outcome acquire(Command.Acquire a, long entryIndex) {
    ResourceRecord r = resources.get(a.resource());
    LeaseRecord held = r == null ? null : r.liveLease(nowMs);
    if (held != null) {
      return Outcome.of(Code.HELD)
          .message("'" + a.resource() + "' is held by token " + held.token() + " (" + held.owner() + ")")
          .token(held.token())
          .currentToken(r.lastToken())
          .holderOwner(held.owner())
          .expiresAtMs(held.expiresAtMs())
          .ttlMs(held.ttlMs())
          .nowMs(nowMs)
          .build();
    }
    if (r == null) {
      r = new ResourceRecord(a.resource());
      resources.put(a.resource(), r);
    }
    long token = issueToken(entryIndex);
    LeaseRecord lease = new LeaseRecord(token, a.owner(), a.ttlMs(), nowMs + a.ttlMs(), false);
    r.setLastToken(token);
    setLease(r, lease);
    r.mutableReceipts().clear();
    return leaseOutcome(Code.GRANTED, r, lease).build();
  }

  /**
   * Tokens follow the log index, so they need no state of their own in a normal cluster; the max with the
   * last issued token keeps them strictly increasing even when a restored cluster's log starts over.
   */
  private long issueToken(long entryIndex) {
    lastIssuedToken = Math.max(lastIssuedToken + 1, entryIndex);
    return lastIssuedToken;
  }

  private Outcome renew(Command.Renew renew) {
    ResourceRecord r = resources.get(renew.resource());
    LeaseRecord live = r == null ? null : r.liveLease(nowMs);
    if (live == null || live.token() != renew.token()) {
      return rejection(Code.LEASE_LOST, r, renew.token(), leaseLostReason(r, renew.token())).build();
    }
    long ttl = renew.ttlMs() == 0 ? live.ttlMs() : renew.ttlMs();
    LeaseRecord renewed = new LeaseRecord(live.token(), live.owner(), ttl, nowMs + ttl, false);
    setLease(r, renewed);
    return leaseOutcome(Code.RENEWED, r, renewed).build();
  }

  private Outcome release(Command.Release release) {
    ResourceRecord r = resources.get(release.resource());
    if (r == null || release.token() > r.lastToken()) {
      return rejection(Code.NOT_HOLDER, r, release.token(),
              "token " + release.token() + " was never issued for '" + release.resource() + "'")
          .build();
    }
    LeaseRecord live = r.liveLease(nowMs);
    if (live != null && live.token() == release.token()) {
      setLease(r, null);
      return Outcome.of(Code.RELEASED).token(release.token()).currentToken(r.lastToken()).nowMs(nowMs).build();
    }
    if (live != null) {
      return rejection(Code.NOT_HOLDER, r, release.token(),
              "'" + release.resource() + "' is held by token " + live.token() + " (" + live.owner() + ")")
          .build();
    }
    if (r.lease() != null && r.lease().token() == release.token()) {
      setLease(r, null); // expired but not yet cleared: forget it, as a release would have
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
      return rejection(Code.UNKNOWN_TOKEN, r, w.token(),
              "token " + w.token() + " was never issued for '" + w.resource() + "'")
          .build();
    }
    if (!w.requestId().isEmpty() && w.token() == r.lastToken()) {
      WriteReceipt receipt = r.receipts().get(w.requestId());
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
            .build();
      }
    }
    if (w.token() < r.lastToken()) {
      return rejection(Code.STALE_TOKEN, r, w.token(),
              "token " + w.token() + " is stale: '" + w.resource() + "' has token " + r.lastToken())
          .build();
    }
    LeaseRecord live = r.liveLease(nowMs);
    if (live == null) {
      return rejection(Code.LEASE_EXPIRED, r, w.token(),
              "lease " + w.token() + " on '" + w.resource() + "' has ended")
          .build();
    }
    for (Command.KeyWrite kw : w.writes()) {
      ValueRecord existing = r.values().get(kw.key());
      if (existing != null && existing.acceptedToken() > w.token()) {
        return rejection(Code.STALE_TOKEN, r, w.token(),
                "key '" + kw.key() + "' accepted token " + existing.acceptedToken())
            .key(kw.key())
            .acceptedToken(existing.acceptedToken())
            .build();
      }
    }
    // Every check passed: change all keys together.
    long firstVersion = 0;
    for (Command.KeyWrite kw : w.writes()) {
      ValueRecord existing = r.values().get(kw.key());
      long version = (existing == null ? 0 : existing.version()) + 1;
      if (kw.delete()) {
        r.mutableValues().remove(kw.key());
      } else {
        r.mutableValues().put(kw.key(), new ValueRecord(kw.value(), w.token(), version, nowMs));
      }
      if (firstVersion == 0) {
        firstVersion = version;
      }
    }
    String firstKey = w.writes().get(0).key();
    if (!w.requestId().isEmpty()) {
      rememberReceipt(r, new WriteReceipt(w.requestId(), firstKey, firstVersion, nowMs));
    }
    return Outcome.of(Code.ACCEPTED)
        .token(w.token())
        .currentToken(r.lastToken())
        .acceptedToken(w.token())
        .key(firstKey)
        .version(firstVersion)
        .writtenAtMs(nowMs)
        .holderOwner(live.owner())
        .expiresAtMs(live.expiresAtMs())
        .nowMs(nowMs)
        .build();
  }

  private void rememberReceipt(ResourceRecord r, WriteReceipt receipt) {
    LinkedHashMap<String, WriteReceipt> receipts = r.mutableReceipts();
    receipts.put(receipt.requestId(), receipt);
    Iterator<String> oldest = receipts.keySet().iterator();
    while (receipts.size() > limits.maxRequestIdsPerLease()) {
      oldest.next();
      oldest.remove();
    }
  }

  /**
   * Every lease that was live at the last state-machine time before this entry, and has not had a grace
   * since its last renewal, is extended to at least {@code now + min(grace, ttl)}: enough for the holder
   * to renew through the new leader, never more than its own TTL.
   */
  private Outcome takeover(long previousNow) {
    long graceMs = limits.takeoverGrace().toMillis();
    for (ResourceRecord r : resources.values()) {
      LeaseRecord lease = r.lease();
      if (lease == null || lease.graceUsed() || !lease.isLiveAt(previousNow)) {
        continue;
      }
      long extended = nowMs + Math.min(graceMs, lease.ttlMs());
      if (extended > lease.expiresAtMs()) {
        setLease(r, new LeaseRecord(lease.token(), lease.owner(), lease.ttlMs(), extended, true));
      }
    }
    return Outcome.of(Code.OK).nowMs(nowMs).build();
  }

  /**
   * The answer apply would certainly give {@code w}, if it is a rejection that no later entry can undo:
   * malformed input, or a token already superseded. Tokens only grow, so a token stale now is stale at
   * any later index and the leader may refuse it without spending a log entry. Returns null when the
   * write has to go through the log. Never changes state.
   */
  public Outcome permanentRejection(Command.Write w) {
    String invalid = validation.check(w);
    if (invalid != null) {
      return Outcome.invalid(invalid);
    }
    ResourceRecord r = resources.get(w.resource());
    if (r != null && w.token() < r.lastToken()) {
      return rejection(Code.STALE_TOKEN, r, w.token(),
              "token " + w.token() + " is stale: '" + w.resource() + "' has token " + r.lastToken())
          .build();
    }
    return null;
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
      return Outcome.of(Code.NOT_FOUND).message("'" + resource + "' has never been leased").nowMs(nowMs).build();
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
      return rejection(Code.UNKNOWN_TOKEN, r, token,
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

  // ---------------------------------------------------------------------------------------------
  // Restoring from a snapshot.

  /** Starts a state from a snapshot's clock and token sequence; add resources with {@link #restore}. */
  public static FencingState restored(Limits limits, long nowMs, long lastIssuedToken) {
    return restored(limits, 0, nowMs, lastIssuedToken);
  }

  public static FencingState restored(Limits limits, long term, long nowMs, long lastIssuedToken) {
    FencingState s = new FencingState(limits);
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
    ResourceRecord r = new ResourceRecord(name);
    r.setLastToken(lastToken);
    setLease(r, lease);
    r.mutableValues().putAll(values);
    for (WriteReceipt receipt : receipts) {
      r.mutableReceipts().put(receipt.requestId(), receipt);
    }
    resources.put(name, r);
    lastIssuedToken = Math.max(lastIssuedToken, lastToken);
  }

  /** Raises the token sequence so that every later token exceeds {@code floor}; never lowers it. */
  public void raiseTokenFloor(long floor) {
    lastIssuedToken = Math.max(lastIssuedToken, floor);
  }

  // ---------------------------------------------------------------------------------------------

  /** Moves time forward to {@code stampMs} (never back) and forgets deadlines that have passed. */
  private void advanceTime(long stampMs) {
    nowMs = Math.max(nowMs, stampMs);
    while (!deadlines.isEmpty() && deadlines.first().expiresAtMs() <= nowMs) {
      deadlines.pollFirst();
    }
  }

  /** Every lease change goes through here so the deadline index stays exact. */
  private void setLease(ResourceRecord r, LeaseRecord lease) {
    LeaseRecord old = r.lease();
    if (old != null) {
      deadlines.remove(new Deadline(old.expiresAtMs(), r.name()));
    }
    r.setLease(lease);
    if (lease != null && lease.isLiveAt(nowMs)) {
      deadlines.add(new Deadline(lease.expiresAtMs(), r.name()));
    }
  }

  /** The earliest deadline among live leases, or Long.MAX_VALUE when no lease is live. */
  public long nextExpiryMs() {
    return deadlines.isEmpty() ? Long.MAX_VALUE : deadlines.first().expiresAtMs();
  }

  private record Deadline(long expiresAtMs, String resource) implements Comparable<Deadline> {
    @Override
    public int compareTo(Deadline o) {
      int c = Long.compare(expiresAtMs, o.expiresAtMs);
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
    return "lease " + token + " has ended";
  }

  private static String first(String a, String b) {
    return a != null ? a : b;
  }

  /** For tests and diagnostics: the resources whose lease is live now. */
  public Collection<ResourceRecord> liveResources() {
    return resources.values().stream().filter(r -> r.liveLease(nowMs) != null).toList();
  }
}
