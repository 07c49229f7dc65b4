package dev.fencekeeper.core;

import dev.fencekeeper.config.Limits;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
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
 * a token, once superseded, is rejected forever, because tokens only grow. *
 *
 * <p>This class is the entry point: it validates, moves time, dispatches each command and answers
 * queries, and takes and restores {@link StateImage}s. The work is split as etcd splits its lessor
 * from its store: {@link Leases} keeps the leases, their wake-up index and the token sequence;
 * {@link Acquires} grants or queues acquires; {@link FencedValues} keeps the values with their
 * write receipts and judges every write by its token.
 */
public final class FencingState {
  private final Limits limits;
  private final Validation validation;
  private final Leases leases;
  private final Acquires acquires;
  private final FencedValues values;
  private long term;

  public FencingState(Limits limits) {
    this.limits = limits;
    this.validation = new Validation(limits);
    this.leases = new Leases(limits);
    this.acquires = new Acquires(limits, leases);
    this.values = new FencedValues(limits, validation, leases);
  }

  public Limits limits() {
    return limits;
  }

  /** State-machine time: the highest leader stamp applied so far. */
  public long nowMs() {
    return leases.nowMs();
  }

  /** The highest token this group has issued, for any resource. */
  public long lastIssuedToken() {
    return leases.tokens().lastIssued();
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
    return leases.tokens().lineage();
  }

  /** Read-only view, in name order, for snapshots and listings. */
  public NavigableMap<String, ResourceRecord> resources() {
    return leases.records();
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
        && t.lineage().getAsLong() != lineage()) {
      throw new ReplicaDivergedException(entryIndex, t.lineage().getAsLong(), lineage());
    }
    long previousNow = leases.nowMs();
    long now = Math.max(previousNow, stampMs);
    boolean newTerm = entryTerm > term;
    if (newTerm) {
      term = entryTerm;
    }
    // The grace is judged against the time before this entry, before anything falls due at its
    // stamp:
    // a lease that was live when the old leader last spoke must not be expired by the election's
    // gap.
    if (newTerm || command instanceof Command.Takeover) {
      leases.grace(previousNow, now);
    }
    leases.advanceTime(now, entryIndex);
    if (command instanceof Command.Batch) {
      // Its commands need answers of their own: applyBatch. Refused here so a caller's slip is not
      // a crash.
      return Outcome.of(Code.INVALID_ARGUMENT)
          .message("batch: apply it with applyBatch")
          .nowMs(nowMs())
          .build();
    }
    String invalid = validation.check(command);
    if (invalid != null) {
      return Outcome.of(Code.INVALID_ARGUMENT).message(invalid).nowMs(nowMs()).build();
    }
    if (command instanceof Command.Acquire a) {
      return acquires.acquire(a, entryIndex);
    }
    if (command instanceof Command.Renew r) {
      return leases.renew(r);
    }
    if (command instanceof Command.Release r) {
      return leases.release(r, entryIndex);
    }
    if (command instanceof Command.Write w) {
      return values.write(w);
    }
    if (command instanceof Command.CancelWait c) {
      return acquires.cancelWait(c, entryIndex);
    }
    if (command instanceof Command.Revoke r) {
      return leases.revoke(r, entryIndex);
    }
    if (command instanceof Command.RenewSession r) {
      return leases.renewSession(r);
    }
    return Outcome.of(Code.OK).nowMs(nowMs()).build(); // Tick, Takeover: their work is done above
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
      Outcome rejected = Outcome.of(Code.INVALID_ARGUMENT).message(invalid).nowMs(nowMs()).build();
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
    return leases.drainEvents();
  }

  // ---------------------------------------------------------------------------------------------
  // Queries: read-only, answered at the current state-machine time.

  public Outcome read(String resource, String key) {
    return values.read(resource, key);
  }

  public Outcome lease(String resource) {
    long nowMs = leases.nowMs();
    String invalid = validation.resource(resource);
    if (invalid != null) {
      return Outcome.invalid(invalid);
    }
    ResourceRecord r = leases.record(resource);
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
    return Answers.leaseOutcome(nowMs, Code.FOUND, r, live).live(true).build();
  }

  public Outcome validateToken(String resource, long token) {
    long nowMs = leases.nowMs();
    String invalid = Answers.first(validation.resource(resource), validation.token(token));
    if (invalid != null) {
      return Outcome.invalid(invalid);
    }
    ResourceRecord r = leases.record(resource);
    if (r == null || token > r.lastToken()) {
      return Answers.rejection(
              nowMs,
              Code.UNKNOWN_TOKEN,
              r,
              token,
              "token " + token + " was never issued for '" + resource + "'")
          .build();
    }
    if (token < r.lastToken()) {
      return Answers.rejection(
              nowMs, Code.STALE, r, token, "a newer token " + r.lastToken() + " exists")
          .build();
    }
    LeaseRecord live = r.liveLease(nowMs);
    if (live == null) {
      return Answers.rejection(nowMs, Code.EXPIRED, r, token, "lease " + token + " has ended")
          .build();
    }
    return Answers.leaseOutcome(nowMs, Code.CURRENT, r, live).sentToken(token).build();
  }

  /**
   * Up to {@code limit} resources whose name starts with {@code prefix}, after {@code after} in
   * name order (empty: from the start). Read-only views, valid while the caller holds the state's
   * read lock.
   */
  public List<ResourceRecord> listResources(String prefix, String after, int limit) {
    return new ArrayList<>(FencedValues.page(leases.records(), prefix, after, limit).values());
  }

  /**
   * Up to {@code limit} keys of {@code resource} starting with {@code prefix}, after {@code after}.
   */
  public List<Map.Entry<String, ValueRecord>> listKeys(
      String resource, String prefix, String after, int limit) {
    return values.listKeys(resource, prefix, after, limit);
  }

  // ---------------------------------------------------------------------------------------------
  // Restoring from a snapshot.

  /**
   * The state as an immutable image, for a snapshot to be written while apply goes on. Costs one
   * small record per resource: values are shared until the state next changes them.
   */
  public StateImage image() {
    List<StateImage.Resource> all = new ArrayList<>(leases.size());
    for (ResourceRecord r : leases.records().values()) {
      all.add(r.image());
    }
    return new StateImage(term, nowMs(), lastIssuedToken(), lineage(), all);
  }

  /** A state exactly as {@code image} pictures it, queues and lock-delays included. */
  public static FencingState restore(Limits limits, StateImage image) {
    FencingState s = new FencingState(limits);
    s.term = image.term();
    s.leases.restoreClock(image.nowMs(), image.lastIssuedToken(), image.lineage());
    for (StateImage.Resource resource : image.resources()) {
      s.leases.restore(resource);
    }
    return s;
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
    leases.beginNewEpoch(seedLineage);
    term = 0;
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
    leases.tokens().raiseFloor(floor);
  }

  /**
   * The earliest time at which some resource needs attention (a lease falls due, a lock-delay ends,
   * an idle record may go); Long.MAX_VALUE when none. The leader commits a tick once its clock
   * passes it.
   */
  public long nextWakeupMs() {
    return leases.nextWakeupMs();
  }

  /** For tests and diagnostics: the resources whose lease is live now. */
  public Collection<ResourceRecord> liveResources() {
    long nowMs = leases.nowMs();
    return leases.records().values().stream().filter(r -> r.liveLease(nowMs) != null).toList();
  }
}
