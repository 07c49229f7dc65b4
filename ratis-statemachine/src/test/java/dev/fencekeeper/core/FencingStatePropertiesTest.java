package dev.fencekeeper.core;

import static dev.fencekeeper.core.Code.ACCEPTED;
import static dev.fencekeeper.core.Code.CURRENT;
import static dev.fencekeeper.core.Code.EXPIRED;
import static dev.fencekeeper.core.Code.FOUND;
import static dev.fencekeeper.core.Code.GRANTED;
import static dev.fencekeeper.core.Code.HELD;
import static dev.fencekeeper.core.Code.INVALID_ARGUMENT;
import static dev.fencekeeper.core.Code.LEASE_EXPIRED;
import static dev.fencekeeper.core.Code.LEASE_LOST;
import static dev.fencekeeper.core.Code.NOT_FOUND;
import static dev.fencekeeper.core.Code.NOT_HOLDER;
import static dev.fencekeeper.core.Code.OK;
import static dev.fencekeeper.core.Code.RELEASED;
import static dev.fencekeeper.core.Code.RENEWED;
import static dev.fencekeeper.core.Code.STALE;
import static dev.fencekeeper.core.Code.STALE_TOKEN;
import static dev.fencekeeper.core.Code.UNKNOWN_TOKEN;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.Command.KeyWrite;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.lifecycle.BeforeProperty;
import net.jqwik.api.statistics.Statistics;

/**
 * Random command sequences (few resources, keys and owners; TTLs mostly within limits; stamps that
 * mostly move forward but sometimes go back; entry index +1 per command; now and then a new Raft
 * term) applied both to {@link FencingState} and to a tiny independent model of docs/design.md,
 * checking the safety invariants after every step.
 */
class FencingStatePropertiesTest {
  static final long MIN_TTL = 100;
  static final long MAX_TTL = 5000;
  static final long GRACE = 700;
  // The default idle timeout (10 min) outlasts any sequence (at most 60 steps of at most 6 s), so
  // no record is forgotten and the model need not forget any either.
  static final Limits LIMITS =
      Harness.LIMITS.toBuilder()
          .minTtl(Duration.ofMillis(MIN_TTL))
          .maxTtl(Duration.ofMillis(MAX_TTL))
          .takeoverGrace(Duration.ofMillis(GRACE))
          .build();
  static final String[] RESOURCES = {"r0", "r1", "r2"};
  static final String[] KEYS = {"k0", "k1", "k2"};
  static final String[] OWNERS = {"A", "B", "C"};
  // Every command comes from this identity, except session renewals now and then from another:
  // those must renew nothing.
  static final String CALLER = "alice";
  static final String OTHER_CALLER = "mallory";
  // Acquires name no session half the time, else one of two.
  static final String[] SESSIONS = {"", "", "session-0-abcdefgh", "session-1-abcdefgh"};

  /**
   * The command did as asked: the client's rule ({@code ResultCode.isSuccess}, the one definition
   * of success), with OK, the answer to the leader's internal commands, a success too.
   */
  static boolean succeeded(Outcome o) {
    return o.code() == OK || dev.fencekeeper.client.ResultCode.valueOf(o.code().name()).isSuccess();
  }

  // Ids that split into a prefix and a counter ("q1", "x1", "7") and ones kept whole ("q01"): see
  // WriteReceipts.
  static final String[] REQUEST_IDS = {"", "", "q1", "q2", "q01", "x1", "7"};
  // Indexes 0..6 are valid for every command; 7 and 9 are out of bounds; 8 (zero) is valid only for
  // Renew.
  static final long[] TTLS = {100, 250, 600, 700, 1000, 2500, 5000, 99, 0, 5001};
  static final Duration TRY_TIMEOUT = Duration.ofSeconds(5); // a try normally takes milliseconds
  // jqwik checks its shrinking time bound only between rounds, and one round may try hundreds of
  // thousands of candidates. Once the first failure is this old, the remaining candidates are
  // skipped (Assume), so a failure is reported within about half a minute, with the smallest
  // failing sequence found by then.
  static final Duration SHRINK_BUDGET = Duration.ofSeconds(20);
  private static volatile long firstFailureNanos;
  private static volatile boolean failed;
  static final List<Code> MUST_OCCUR =
      List.of(
          GRANTED,
          HELD,
          RENEWED,
          LEASE_LOST,
          RELEASED,
          NOT_HOLDER,
          ACCEPTED,
          STALE_TOKEN,
          LEASE_EXPIRED,
          UNKNOWN_TOKEN,
          INVALID_ARGUMENT,
          OK);

  enum Kind {
    ACQUIRE,
    RENEW,
    RELEASE,
    WRITE,
    TAKEOVER,
    TICK,
    RENEW_SESSION
  }

  /** One generated step; its token is resolved against the model when the step runs. */
  record Step(
      Kind kind,
      int resource,
      int owner,
      int ttl,
      int token,
      int keys,
      int requestId,
      long stampDelta,
      boolean newTerm,
      boolean sameEntry) {
    Step inNewTerm() {
      return new Step(kind, resource, owner, ttl, token, keys, requestId, stampDelta, true, false);
    }

    /** Carried by the previous step's log entry, as a client's batch carries several commands. */
    Step inSameEntry() {
      return new Step(
          kind, resource, owner, ttl, token, keys, requestId, stampDelta, newTerm, true);
    }

    boolean batchable() {
      return kind == Kind.ACQUIRE
          || kind == Kind.RENEW
          || kind == Kind.RELEASE
          || kind == Kind.WRITE
          || kind == Kind.RENEW_SESSION;
    }
  }

  // Weights are tables of equally likely entries: generators built only from integer ranges and
  // map() shrink fast (jqwik's frequency()/frequencyOf() shrink pathologically slowly on long lists
  // of steps).
  private static final Kind[] KIND_TABLE = {
    Kind.ACQUIRE,
    Kind.ACQUIRE,
    Kind.ACQUIRE,
    Kind.WRITE,
    Kind.WRITE,
    Kind.WRITE,
    Kind.WRITE,
    Kind.WRITE,
    Kind.RENEW,
    Kind.RENEW,
    Kind.RELEASE,
    Kind.TAKEOVER,
    Kind.TICK,
    Kind.RENEW_SESSION,
    Kind.RENEW_SESSION
  };
  // Mostly the resource's current token (0); sometimes an older, foreign, never-issued or
  // non-positive one.
  private static final int[] TOKEN_TABLE = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6};

  @Provide
  Arbitrary<List<Step>> sequences() {
    Arbitrary<Step> step =
        Combinators.combine(
                uniform(0, KIND_TABLE.length - 1).map(i -> KIND_TABLE[i]),
                uniform(0, RESOURCES.length - 1),
                uniform(0, OWNERS.length - 1),
                // TTL index: each valid TTL three times as likely as each out-of-bounds one
                uniform(0, 23).map(i -> i < 21 ? i / 3 : 7 + (i - 21)),
                uniform(0, TOKEN_TABLE.length - 1).map(i -> TOKEN_TABLE[i]),
                uniform(0, 511),
                uniform(0, REQUEST_IDS.length - 1),
                uniform(0, 9_999).map(FencingStatePropertiesTest::stampDelta))
            .as(
                (kind, res, owner, ttl, token, keys, rid, delta) ->
                    new Step(kind, res, owner, ttl, token, keys, rid, delta, false, false));
    // One step in twelve is the first entry of a new leader's term; one in three asks to share the
    // previous step's entry (a batch), which check() grants when both are client commands.
    Arbitrary<Step> maybeNewTerm =
        Combinators.combine(step, uniform(0, 11), uniform(0, 2))
            .as((s, t, b) -> t == 11 ? s.inNewTerm() : b == 2 ? s.inSameEntry() : s);
    return maybeNewTerm
        .list()
        .ofMinSize(1)
        .ofMaxSize(60)
        .withSizeDistribution(RandomDistribution.uniform());
  }

  /**
   * Integers in [min, max], all equally likely (jqwik's default leans toward small values); shrink
   * to min.
   */
  private static Arbitrary<Integer> uniform(int min, int max) {
    return Arbitraries.integers().between(min, max).withDistribution(RandomDistribution.uniform());
  }

  /**
   * 80%: 0..400 ms forward; 10%: 1..1500 ms backwards; 10%: 801..6000 ms forward (leases run out).
   */
  private static long stampDelta(int i) {
    if (i < 8_000) {
      return i % 401;
    }
    if (i < 9_000) {
      return -(1 + i % 1500);
    }
    return 801 + i % 5200;
  }

  @BeforeProperty
  void resetShrinkBudget() {
    failed = false;
  }

  // Outcomes agree with the model; tokens strictly increase; one live lease per resource; a key's
  // acceptedToken never decreases; rejections change nothing; replay is deterministic.
  @Property(tries = 700)
  void agreesWithModelAndKeepsInvariants(@ForAll("sequences") List<Step> steps) {
    Assume.that(!failed || System.nanoTime() - firstFailureNanos < SHRINK_BUDGET.toNanos());
    List<Code> codes = new ArrayList<>();
    List<String> events = new ArrayList<>();
    StringBuffer trace =
        new StringBuffer(); // read here even if the checking thread is stuck in apply
    try {
      runBounded(() -> check(steps, codes, events, trace));
    } catch (AssertionError | RuntimeException e) {
      if (!failed) {
        firstFailureNanos = System.nanoTime();
        failed = true;
      }
      // jqwik's statistics report throws on a label with no entries, which would hide this failure.
      Statistics.label("code").collect("(failed try)");
      Statistics.label("event").collect("(failed try)");
      throw new AssertionError(
          e + "\nentries (index, term, stamp, command -> outcome):\n" + trace, e);
    }
    // Statistics belong to the property's own thread.
    codes.forEach(code -> Statistics.label("code").collect(code));
    events.forEach(event -> Statistics.label("event").collect(event));
    Statistics.label("code")
        .coverage(
            cov -> {
              for (Code code : MUST_OCCUR) {
                cov.check(code).count(n -> n > 0);
              }
            });
    Statistics.label("event")
        .coverage(
            cov -> {
              cov.check("request id retry deduplicated").count(n -> n > 0);
              cov.check("takeover grace given").count(n -> n > 0);
              cov.check("takeover refused a second grace").count(n -> n > 0);
              cov.check("stamp went backwards").count(n -> n > 0);
              cov.check("new term").count(n -> n > 0);
              cov.check("shared a log entry").count(n -> n > 0);
              cov.check("session renewed a lease").count(n -> n > 0);
              cov.check("session left a lease out").count(n -> n > 0);
              cov.check("session renewal by another identity").count(n -> n > 0);
            });
  }

  /**
   * jqwik ignores @Timeout: each try runs on a daemon thread and fails after TRY_TIMEOUT, so a core
   * that loops forever in apply fails the property (the last entry of the trace then has no
   * outcome) instead of hanging the build, and the stuck thread does not keep the JVM alive.
   */
  private static void runBounded(Runnable body) {
    FutureTask<Void> task = new FutureTask<>(body, null);
    Thread worker = new Thread(task, "fencing-property-try");
    worker.setDaemon(true);
    worker.start();
    try {
      task.get(TRY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      // Each stuck try leaves a thread spinning: spend the shrinking budget now, so there is only
      // this one.
      firstFailureNanos = System.nanoTime() - SHRINK_BUDGET.toNanos();
      failed = true;
      throw new AssertionError(
          "the try did not finish within " + TRY_TIMEOUT + ": does apply loop forever?");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof AssertionError a) {
        throw a;
      }
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new AssertionError(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  /**
   * Runs one sequence against the core and the model, asserting after every step; records what
   * happened.
   */
  private static void check(
      List<Step> steps, List<Code> codes, List<String> events, StringBuffer trace) {
    FencingState state = new FencingState(LIMITS);
    // Gets every successful command and a Tick for every rejected one: if a rejection changes
    // nothing, the two stay identical (time, and what time alone does, included).
    FencingState shadow = new FencingState(LIMITS);
    Model model = new Model(events);
    List<Command> commands = new ArrayList<>();
    List<Long> stamps = new ArrayList<>();
    List<Long> terms = new ArrayList<>();
    List<Long> indexes = new ArrayList<>();
    List<String> outcomes = new ArrayList<>();
    Step previous = null;
    Map<String, Long> highestAccepted = new HashMap<>();
    long stamp = Harness.T0;
    long highestToken = 0;
    long term = 0; // a fresh FencingState's term: only generated steps open new terms
    long index = 0;
    for (Step s : steps) {
      // A batch (FencingState.applyBatch) applies each of its commands through apply() at the
      // entry's index and stamp: so several commands at one index must agree with the model exactly
      // as entries of their own.
      boolean sameEntry =
          s.sameEntry() && s.batchable() && previous != null && previous.batchable();
      previous = s;
      if (sameEntry) {
        events.add("shared a log entry");
      } else {
        stamp += s.stampDelta();
        index++;
      }
      if (s.newTerm()) {
        term++;
        events.add("new term");
      }
      Command c = model.resolve(s);
      commands.add(c);
      stamps.add(stamp);
      terms.add(term);
      indexes.add(index);
      trace.append(
          String.format(
              "#%d term=%d stamp=T0%+d now=%s %s%n",
              index,
              term,
              stamp - Harness.T0,
              state.nowMs() == 0 ? "0" : String.format("T0%+d", state.nowMs() - Harness.T0),
              c));
      if (s.stampDelta() < 0 && !sameEntry) {
        events.add("stamp went backwards");
      }

      String before = StateDump.of(state);
      long nowBefore = state.nowMs();
      long newNow = Math.max(nowBefore, stamp);
      LeaseRecord liveBefore = null;
      if (c instanceof Command.Acquire a && state.resources().containsKey(a.resource())) {
        liveBefore = state.resources().get(a.resource()).liveLease(newNow);
      }

      Outcome o = state.apply(c, term, index, stamp);
      outcomes.add(StateDump.render(o));
      trace.append("   -> ").append(o).append('\n');
      codes.add(o.code());

      // The model agrees on the code and the fields a caller acts on, and on the whole state after.
      model.step(c, stamp, s.newTerm(), o);
      model.assertDiagnosable(c, o);
      model.assertMatches(state);

      // Time is max(previous, stamp); the term follows the entries; the leader's next tick comes no
      // later than the earliest live lease's expiry, and nothing is overdue after an entry.
      assertThat(state.nowMs()).as("now").isEqualTo(newNow);
      assertThat(state.term()).as("term").isEqualTo(term);
      assertThat(state.nextWakeupMs())
          .as("nextWakeupMs")
          .isLessThanOrEqualTo(model.nextExpiry())
          .isGreaterThan(state.nowMs());

      // Tokens strictly increase across all resources; a grant never overlaps a live lease.
      if (o.code() == GRANTED) {
        assertThat(o.token()).as("new token").isGreaterThan(highestToken);
        highestToken = o.token();
        assertThat(liveBefore).as("live lease when granted").isNull();
      }
      assertThat(state.lastIssuedToken()).as("lastIssuedToken").isEqualTo(highestToken);

      // At most one live lease per resource, and it is the resource's newest token.
      for (ResourceRecord r : state.resources().values()) {
        LeaseRecord live = r.liveLease(state.nowMs());
        if (live != null) {
          assertThat(live.token()).as("live lease of %s", r.name()).isEqualTo(r.lastToken());
        }
        assertThat(r.lastToken()).isLessThanOrEqualTo(highestToken);
      }

      // A key's acceptedToken never decreases (not even through a delete and a re-create).
      for (ResourceRecord r : state.resources().values()) {
        for (Map.Entry<String, ValueRecord> v : r.values().entrySet()) {
          String id = r.name() + "/" + v.getKey();
          long accepted = v.getValue().acceptedToken();
          assertThat(accepted)
              .as("acceptedToken of %s", id)
              .isGreaterThanOrEqualTo(highestAccepted.getOrDefault(id, 0L));
          highestAccepted.put(id, accepted);
        }
      }

      // A rejected command changes nothing: the state is exactly what a Tick in its place would
      // have left (time, and what time alone does, included), and apart from time it is the state
      // before.
      shadow.apply(succeeded(o) ? c : new Command.Tick(), term, index, stamp);
      assertThat(StateDump.withNow(state))
          .as("state vs shadow that got a Tick for each rejection")
          .isEqualTo(StateDump.withNow(shadow));
      if (!succeeded(o)
          && !s.newTerm()) { // a new term's first entry is preceded by the takeover grace
        assertThat(StateDump.of(state)).as("state after %s", o.code()).isEqualTo(before);
      }
    }

    // Determinism: the same entries on a fresh state give the same outcomes and the same state.
    FencingState replay = new FencingState(LIMITS);
    for (int i = 0; i < commands.size(); i++) {
      Outcome o = replay.apply(commands.get(i), terms.get(i), indexes.get(i), stamps.get(i));
      assertThat(StateDump.render(o)).as("replayed outcome #%d", i + 1).isEqualTo(outcomes.get(i));
    }
    assertThat(StateDump.withNow(replay)).as("replayed state").isEqualTo(StateDump.withNow(state));

    // The session index is derived from the lease records: a state restored from an image renews
    // exactly what the original renews.
    FencingState restored = FencingState.restore(LIMITS, state.image());
    for (String session : SESSIONS) {
      if (session.isEmpty()) {
        continue;
      }
      Command renew = new Command.RenewSession(session, CALLER);
      Outcome original = state.apply(renew, term, index + 1, stamp);
      Outcome fromImage = restored.apply(renew, term, index + 1, stamp);
      assertThat(StateDump.render(fromImage))
          .as("session %s renewed after a restore", session)
          .isEqualTo(StateDump.render(original));
    }
    assertThat(StateDump.withNow(restored))
        .as("restored state after session renewals")
        .isEqualTo(StateDump.withNow(state));
  }

  /**
   * The reference model: docs/design.md written as plainly as possible, sharing no code with the
   * core. It takes each granted token from the core's outcome after checking it exceeds every token
   * issued before, so it does not depend on how tokens are numbered.
   */
  static final class Model {
    final List<String> events; // what happened, for the property's statistics
    long now;
    long lastIssued;
    final List<Long> issued = new ArrayList<>();
    final Map<String, Res> resources = new TreeMap<>();
    final Map<String, Val> values = new TreeMap<>(); // "resource/key"

    static final class Res {
      long lastToken;
      long holder; // 0: released
      String owner;
      long ttl;
      long expiresAt;
      boolean graceUsed;
      String session = "";
      final List<Long> tokens = new ArrayList<>();
      final Map<String, Val> receipts =
          new HashMap<>(); // requestId -> first key's record, under lastToken
    }

    record Val(String key, byte[] bytes, long token, long version, long at) {}

    Model(List<String> events) {
      this.events = events;
    }

    boolean live(Res r) {
      return r != null && r.holder != 0 && r.expiresAt > now;
    }

    static boolean ttlOk(long ttl) {
      return ttl >= MIN_TTL && ttl <= MAX_TTL;
    }

    /**
     * Turns a generated step into a command, choosing a token that is current, older, foreign,
     * unknown or bad.
     */
    Command resolve(Step s) {
      String resource = RESOURCES[s.resource()];
      Res r = resources.get(resource);
      long current = r == null ? Math.max(1, lastIssued) : r.lastToken;
      long token = switch (s.token()) { // see TOKEN_TABLE for the weights
            case 0 -> current;
            case 1 ->
                r == null || r.tokens.size() < 2
                    ? current
                    : r.tokens.get(r.tokens.size() - 2); // previous
            case 2 -> Math.max(1, lastIssued); // newest anywhere, often another resource's
            case 3 -> lastIssued + 1; // never issued
            case 4 -> issued.isEmpty() ? 1 : issued.get(0); // the oldest
            case 5 -> current + 1; // never issued for this resource
            default -> 0; // not a token at all: INVALID_ARGUMENT
          };
      long ttl = TTLS[s.ttl()];
      switch (s.kind()) {
        case ACQUIRE:
          return new Command.Acquire(
              resource, OWNERS[s.owner()], ttl, "", 0, 0, CALLER, SESSIONS[s.keys() & 3]);
        case RENEW:
          return new Command.Renew(resource, token, ttl, CALLER);
        case RELEASE:
          return new Command.Release(resource, token, CALLER);
        case RENEW_SESSION:
          // keys: bit 0 picks the session, bit 1 another identity, bits 2-3 leave a lease out
          // (the chosen resource's live token, when bit 2 is set).
          String session = SESSIONS[2 + (s.keys() & 1)];
          String caller =
              (s.keys() >> 1 & 1) == 1 && (s.keys() >> 3 & 1) == 1 ? OTHER_CALLER : CALLER;
          java.util.Set<Long> except =
              (s.keys() >> 2 & 1) == 1 && r != null && r.holder != 0
                  ? java.util.Set.of(r.holder)
                  : java.util.Set.of();
          return new Command.RenewSession(session, except, caller);
        case WRITE:
          int subset = s.keys() & 7;
          int deletes = (s.keys() >> 3) & 7;
          int seed = s.keys() >> 6;
          List<KeyWrite> writes = new ArrayList<>();
          int mask = subset == 0 ? 1 : subset;
          for (int i = 0; i < KEYS.length; i++) {
            if ((mask >> i & 1) == 1) {
              writes.add(
                  (deletes >> i & 1) == 1
                      ? KeyWrite.delete(KEYS[i])
                      : KeyWrite.put(
                          KEYS[i], ("v" + seed + "." + i).getBytes(StandardCharsets.UTF_8)));
            }
          }
          return new Command.Write(resource, token, writes, REQUEST_IDS[s.requestId()], CALLER);
        case TAKEOVER:
          return new Command.Takeover();
        default:
          return new Command.Tick();
      }
    }

    /**
     * Checks the core's outcome {@code o} of command {@code c} against docs/design.md, then
     * advances the model. The first entry of a new term is preceded by the takeover grace (a
     * Takeover entry gives it only once).
     */
    void step(Command c, long stamp, boolean newTerm, Outcome o) {
      long previous = now;
      now = Math.max(now, stamp);
      if (newTerm && !(c instanceof Command.Takeover)) {
        takeover(previous);
      }
      if (c instanceof Command.Acquire a) {
        Res r = resources.get(a.resource());
        if (!ttlOk(a.ttlMs())) {
          expect(o, INVALID_ARGUMENT);
        } else if (live(r)) {
          expect(o, HELD);
          assertThat(o.token()).as("HELD token").isEqualTo(r.holder);
          assertThat(o.holderOwner()).as("HELD owner").isEqualTo(r.owner);
          assertThat(o.expiresAtMs()).as("HELD expiresAt").isEqualTo(r.expiresAt);
        } else {
          expect(o, GRANTED);
          assertThat(o.token()).as("granted token").isGreaterThan(lastIssued);
          lastIssued = o.token();
          issued.add(o.token());
          r = resources.computeIfAbsent(a.resource(), k -> new Res());
          r.lastToken = o.token();
          r.holder = o.token();
          r.owner = a.owner();
          r.ttl = a.ttlMs();
          r.expiresAt = now + a.ttlMs();
          r.graceUsed = false;
          r.session = a.sessionId();
          r.tokens.add(o.token());
          r.receipts.clear();
          assertThat(o.expiresAtMs()).as("GRANTED expiresAt").isEqualTo(r.expiresAt);
        }
      } else if (c instanceof Command.Renew n) {
        Res r = resources.get(n.resource());
        if (n.token() <= 0 || (n.ttlMs() != 0 && !ttlOk(n.ttlMs()))) {
          expect(o, INVALID_ARGUMENT);
        } else if (live(r) && r.holder == n.token()) {
          expect(o, RENEWED);
          r.ttl = n.ttlMs() == 0 ? r.ttl : n.ttlMs();
          r.expiresAt = now + r.ttl;
          r.graceUsed = false;
          assertThat(o.expiresAtMs()).as("RENEWED expiresAt").isEqualTo(r.expiresAt);
        } else {
          expect(o, LEASE_LOST);
          assertThat(o.currentToken())
              .as("LEASE_LOST currentToken")
              .isEqualTo(r == null ? 0 : r.lastToken);
        }
      } else if (c instanceof Command.Release l) {
        Res r = resources.get(l.resource());
        if (l.token() <= 0) {
          expect(o, INVALID_ARGUMENT);
        } else if (r == null || l.token() > r.lastToken) {
          expect(o, NOT_HOLDER);
        } else if (live(r) && r.holder == l.token()) {
          expect(o, RELEASED);
          assertThat(o.alreadyEnded()).as("alreadyEnded").isFalse();
          r.holder = 0;
        } else if (live(r)) {
          expect(o, NOT_HOLDER);
          assertThat(o.holderOwner()).as("NOT_HOLDER owner").isEqualTo(r.owner);
        } else {
          expect(o, RELEASED);
          assertThat(o.alreadyEnded()).as("alreadyEnded").isTrue();
          if (r.holder == l.token()) {
            r.holder = 0;
          }
        }
      } else if (c instanceof Command.Write w) {
        write(w, o);
      } else if (c instanceof Command.RenewSession rs) {
        renewSession(rs, o);
      } else if (c instanceof Command.Takeover) {
        expect(o, OK);
        takeover(previous);
      } else {
        expect(o, OK);
      }
      assertThat(o.nowMs()).as("outcome nowMs").isEqualTo(now);
    }

    /**
     * Every rejection about a token carries what a caller needs to diagnose it: the token it sent,
     * the resource's newest token and the live holder's owner (a rejection leaves the model as it
     * was).
     */
    void assertDiagnosable(Command c, Outcome o) {
      if (succeeded(o) || o.code() == INVALID_ARGUMENT || o.code() == HELD) {
        return;
      }
      String resource;
      long sent;
      if (c instanceof Command.Renew n) {
        resource = n.resource();
        sent = n.token();
      } else if (c instanceof Command.Release l) {
        resource = l.resource();
        sent = l.token();
      } else if (c instanceof Command.Write w) {
        resource = w.resource();
        sent = w.token();
      } else {
        throw new AssertionError("unexpected rejection " + o + " of " + c);
      }
      Res r = resources.get(resource);
      assertThat(o.sentToken()).as("sentToken of %s", o).isEqualTo(sent);
      assertThat(o.currentToken())
          .as("currentToken of %s", o)
          .isEqualTo(r == null ? 0 : r.lastToken);
      assertThat(o.holderOwner()).as("holderOwner of %s", o).isEqualTo(live(r) ? r.owner : "");
      assertThat(o.message()).as("message of %s", o).isNotEmpty();
    }

    /** Each lease live at the previous time gets, once per renewal, up to now + min(grace, ttl). */
    private void takeover(long previous) {
      for (Res r : resources.values()) {
        if (r.holder != 0 && r.expiresAt > previous) {
          long extended = now + Math.min(GRACE, r.ttl);
          if (r.graceUsed) {
            if (extended > r.expiresAt) {
              events.add("takeover refused a second grace");
            }
          } else if (extended > r.expiresAt) {
            r.expiresAt = extended;
            r.graceUsed = true;
            events.add("takeover grace given");
          }
        }
      }
    }

    /**
     * A session renewal extends, by its own TTL, every live lease of the session acquired by the
     * same identity and not left out; nothing else changes, and it is never refused.
     */
    private void renewSession(Command.RenewSession rs, Outcome o) {
      expect(o, RENEWED);
      int renewed = 0;
      for (Res r : resources.values()) {
        if (!live(r) || !r.session.equals(rs.sessionId())) {
          continue;
        }
        if (!rs.caller().equals(CALLER)) {
          events.add("session renewal by another identity");
          continue;
        }
        if (rs.exceptTokens().contains(r.holder)) {
          events.add("session left a lease out");
          continue;
        }
        r.expiresAt = now + r.ttl;
        r.graceUsed = false;
        renewed++;
        events.add("session renewed a lease");
      }
      assertThat(o.renewed()).as("leases renewed by %s", rs).isEqualTo(renewed);
    }

    long nextExpiry() {
      long next = Long.MAX_VALUE;
      for (Res r : resources.values()) {
        if (live(r)) {
          next = Math.min(next, r.expiresAt);
        }
      }
      return next;
    }

    private void write(Command.Write w, Outcome o) {
      Res r = resources.get(w.resource());
      if (w.token() <= 0) {
        expect(o, INVALID_ARGUMENT);
        return;
      }
      if (r == null || w.token() > r.lastToken) {
        expect(o, UNKNOWN_TOKEN);
        assertThat(o.sentToken()).as("sentToken").isEqualTo(w.token());
        return;
      }
      Val receipt =
          w.requestId().isEmpty() || w.token() != r.lastToken
              ? null
              : r.receipts.get(w.requestId());
      if (receipt != null) {
        expect(o, ACCEPTED);
        events.add("request id retry deduplicated");
        assertThat(o.version()).as("retry version").isEqualTo(receipt.version());
        assertThat(o.key()).as("retry key").isEqualTo(receipt.key());
        assertThat(o.writtenAtMs()).as("retry writtenAt").isEqualTo(receipt.at());
        return;
      }
      if (w.token() < r.lastToken) {
        expect(o, STALE_TOKEN);
        assertThat(o.currentToken()).as("STALE_TOKEN currentToken").isEqualTo(r.lastToken);
        assertThat(o.sentToken()).as("STALE_TOKEN sentToken").isEqualTo(w.token());
        return;
      }
      if (!live(r)) {
        expect(o, LEASE_EXPIRED);
        assertThat(o.currentToken()).as("LEASE_EXPIRED currentToken").isEqualTo(r.lastToken);
        return;
      }
      expect(o, ACCEPTED);
      Val first = null;
      for (KeyWrite kw : w.writes()) {
        String id = w.resource() + "/" + kw.key();
        Val old = values.get(id);
        Val written =
            new Val(kw.key(), kw.value(), w.token(), old == null ? 1 : old.version() + 1, now);
        if (kw.delete()) {
          values.remove(id);
        } else {
          values.put(id, written);
        }
        first = first == null ? written : first;
      }
      if (!w.requestId().isEmpty()) {
        r.receipts.put(w.requestId(), first);
      }
      assertThat(o.version()).as("ACCEPTED version").isEqualTo(first.version());
      assertThat(o.acceptedToken()).as("ACCEPTED acceptedToken").isEqualTo(w.token());
    }

    private static void expect(Outcome o, Code code) {
      assertThat(o.code()).as("code of %s", o).isEqualTo(code);
    }

    /** The core's state and queries agree with the model. */
    void assertMatches(FencingState s) {
      assertThat(s.resources().keySet())
          .as("resources")
          .containsExactlyElementsOf(resources.keySet());
      for (Map.Entry<String, Res> e : resources.entrySet()) {
        String name = e.getKey();
        Res r = e.getValue();
        ResourceRecord rr = s.resources().get(name);
        assertThat(rr.lastToken()).as("lastToken of %s", name).isEqualTo(r.lastToken);
        LeaseRecord live = rr.liveLease(now);
        Outcome lease = s.lease(name);
        assertThat(lease.code()).isEqualTo(FOUND);
        assertThat(lease.live()).as("live lease of %s", name).isEqualTo(live(r));
        if (live(r)) {
          assertThat(live).as("live lease of %s", name).isNotNull();
          assertThat(live.token()).isEqualTo(r.holder);
          assertThat(live.owner()).isEqualTo(r.owner);
          assertThat(live.expiresAtMs()).as("expiresAt of %s", name).isEqualTo(r.expiresAt);
          assertThat(live.sessionId()).as("session of %s", name).isEqualTo(r.session);
        } else {
          assertThat(live).as("live lease of %s", name).isNull();
        }
        for (long t : new long[] {r.lastToken - 1, r.lastToken, r.lastToken + 1}) {
          assertThat(s.validateToken(name, t).code())
              .as("validate %s %d", name, t)
              .isEqualTo(validate(r, t));
        }
        int count = 0;
        for (String key : KEYS) {
          Val v = values.get(name + "/" + key);
          Outcome read = s.read(name, key);
          if (v == null) {
            assertThat(read.code()).as("read %s/%s", name, key).isEqualTo(NOT_FOUND);
          } else {
            count++;
            assertThat(read.code()).as("read %s/%s", name, key).isEqualTo(FOUND);
            assertThat(read.value()).as("value of %s/%s", name, key).isEqualTo(v.bytes());
            assertThat(read.acceptedToken())
                .as("acceptedToken of %s/%s", name, key)
                .isEqualTo(v.token());
            assertThat(read.version()).as("version of %s/%s", name, key).isEqualTo(v.version());
            assertThat(read.writtenAtMs()).as("writtenAt of %s/%s", name, key).isEqualTo(v.at());
          }
        }
        assertThat(rr.values()).as("values of %s", name).hasSize(count);
      }
      for (String name : RESOURCES) {
        if (!resources.containsKey(name)) {
          assertThat(s.lease(name).code()).isEqualTo(NOT_FOUND);
          assertThat(s.validateToken(name, Math.max(1, lastIssued)).code())
              .isEqualTo(UNKNOWN_TOKEN);
        }
      }
    }

    private Code validate(Res r, long token) {
      if (token <= 0) {
        return INVALID_ARGUMENT;
      }
      if (token > r.lastToken) {
        return UNKNOWN_TOKEN;
      }
      if (token < r.lastToken) {
        return STALE;
      }
      return live(r) ? CURRENT : EXPIRED;
    }
  }
}
