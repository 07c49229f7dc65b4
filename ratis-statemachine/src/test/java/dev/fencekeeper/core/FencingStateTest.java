package dev.fencekeeper.core;

import static dev.fencekeeper.core.Code.ACCEPTED;
import static dev.fencekeeper.core.Code.CURRENT;
import static dev.fencekeeper.core.Code.EXPIRED;
import static dev.fencekeeper.core.Code.FOUND;
import static dev.fencekeeper.core.Code.GRANTED;
import static dev.fencekeeper.core.Code.HELD;
import static dev.fencekeeper.core.Code.LEASE_EXPIRED;
import static dev.fencekeeper.core.Code.NOT_FOUND;
import static dev.fencekeeper.core.Code.OK;
import static dev.fencekeeper.core.Code.STALE;
import static dev.fencekeeper.core.Code.STALE_TOKEN;
import static dev.fencekeeper.core.Code.UNKNOWN_TOKEN;
import static dev.fencekeeper.core.Harness.T0;
import static dev.fencekeeper.core.Harness.bytes;
import static dev.fencekeeper.core.Harness.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.core.Command.KeyWrite;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What {@link FencingState} itself decides, each driven with explicit entry stamps: queries, terms,
 * a seeded state's token epoch and lineage. The tables of the commands themselves are {@link
 * AcquiresTest}, {@link LeasesTest} and {@link FencedValuesTest}, after docs/design.md.
 */
// Preemptive: a core stuck in a loop fails the test instead of hanging the build.
@Timeout(value = 5, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FencingStateTest {

  @Nested
  class Queries {

    // Read answers NOT_FOUND for a never-leased resource and for a never-written key, FOUND with
    // the fields otherwise.
    @Test
    void read() {
      Harness h = new Harness();
      assertThat(h.state.read("r", "k").code()).isEqualTo(NOT_FOUND);
      long t = h.acquire(T0, "r", "A", 1000).token();
      assertThat(h.state.read("r", "k").code()).isEqualTo(NOT_FOUND);
      assertThat(h.state.read("r", "k").currentToken()).isEqualTo(t);
      h.put(T0 + 5, "r", t, "k", "v");

      Outcome o = h.state.read("r", "k");

      assertThat(o.code()).isEqualTo(FOUND);
      assertThat(text(o.value())).isEqualTo("v");
      assertThat(o.acceptedToken()).isEqualTo(t);
      assertThat(o.version()).isEqualTo(1);
      assertThat(o.writtenAtMs()).isEqualTo(T0 + 5);
      assertThat(o.key()).isEqualTo("k");
    }

    // Lease query: NOT_FOUND if never leased; the live holder's token, owner, expiry and lastToken;
    // not live after expiry.
    @Test
    void lease() {
      Harness h = new Harness();
      assertThat(h.state.lease("r").code()).isEqualTo(NOT_FOUND);
      long t = h.acquire(T0, "r", "A", 1000).token();

      Outcome live = h.state.lease("r");
      assertThat(live.code()).isEqualTo(FOUND);
      assertThat(live.live()).isTrue();
      assertThat(live.token()).isEqualTo(t);
      assertThat(live.holderOwner()).isEqualTo("A");
      assertThat(live.expiresAtMs()).isEqualTo(T0 + 1000);
      assertThat(live.currentToken()).isEqualTo(t);

      h.tick(T0 + 1000);
      Outcome ended = h.state.lease("r");
      assertThat(ended.code()).isEqualTo(FOUND);
      assertThat(ended.live()).isFalse();
      assertThat(ended.currentToken()).isEqualTo(t);
    }

    // Validate answers CURRENT for the live lease's token, STALE once superseded, EXPIRED for the
    // newest ended lease, UNKNOWN_TOKEN for tokens never issued for the resource.
    @Test
    void validate() {
      Harness h = new Harness();
      assertThat(h.state.validateToken("r", 1).code()).isEqualTo(UNKNOWN_TOKEN);
      long tA = h.acquire(T0, "r", "A", 1000).token();

      Outcome current = h.state.validateToken("r", tA);
      assertThat(current.code()).isEqualTo(CURRENT);
      assertThat(current.expiresAtMs()).isEqualTo(T0 + 1000);
      assertThat(h.state.validateToken("r", tA + 1).code()).isEqualTo(UNKNOWN_TOKEN);

      h.tick(T0 + 1000);
      assertThat(h.state.validateToken("r", tA).code()).isEqualTo(EXPIRED);

      long tB = h.acquire(T0 + 1001, "r", "B", 1000).token();
      Outcome stale = h.state.validateToken("r", tA);
      assertThat(stale.code()).isEqualTo(STALE);
      assertThat(stale.currentToken()).isEqualTo(tB);
      assertThat(h.state.validateToken("r", tB).code()).isEqualTo(CURRENT);

      h.release(T0 + 1002, "r", tB);
      assertThat(h.state.validateToken("r", tB).code()).isEqualTo(EXPIRED);
      assertThat(h.state.validateToken("r", tA).code()).isEqualTo(STALE);
    }
  }

  @Nested
  class Terms {
    private final Command.Tick tick = new Command.Tick();

    // The first entry of a newer term is judged after the takeover grace, even when it precedes the
    // takeover entry.
    @Test
    void firstEntryOfNewTermSeesTheGrace() {
      Harness h = new Harness();
      long t = h.inTerm(1, T0, new Command.Acquire("r", "A", 1000)).token();
      h.inTerm(1, T0 + 900, tick);

      Outcome w = h.inTerm(2, T0 + 1500, put("r", t));

      assertThat(w.code()).isEqualTo(ACCEPTED);
      assertThat(w.expiresAtMs()).isEqualTo(T0 + 2500); // min(grace 2 s, ttl 1 s) past the stamp
      assertThat(h.state.term()).isEqualTo(2);
    }

    // Without a term change the same late write is LEASE_EXPIRED: the grace belongs to leader
    // changes only.
    @Test
    void sameTermGivesNoGrace() {
      Harness h = new Harness();
      long t = h.inTerm(1, T0, new Command.Acquire("r", "A", 1000)).token();
      h.inTerm(1, T0 + 900, tick);

      assertThat(h.inTerm(1, T0 + 1500, put("r", t)).code()).isEqualTo(LEASE_EXPIRED);
      assertThat(h.state.term()).isEqualTo(1);
    }

    // A new leader's first entry being another client's acquire cannot take a live holder's lease:
    // HELD.
    @Test
    void acquireFirstInNewTermIsHeld() {
      Harness h = new Harness();
      long t = h.inTerm(1, T0, new Command.Acquire("r", "A", 1000)).token();
      h.inTerm(1, T0 + 900, tick);

      Outcome b = h.inTerm(2, T0 + 1500, new Command.Acquire("r", "B", 1000));

      assertThat(b.code()).isEqualTo(HELD);
      assertThat(b.token()).isEqualTo(t);
      assertThat(b.expiresAtMs()).isEqualTo(T0 + 2500);
    }

    // The implicit grace of a new term and the leader's own Takeover entry together give one grace,
    // not two, and neither does a further term change before a renewal.
    @Test
    void oneGracePerRenewalAcrossTerms() {
      Harness h = new Harness();
      h.inTerm(1, T0, new Command.Acquire("r", "A", 1000));
      h.inTerm(1, T0 + 900, tick);
      h.inTerm(2, T0 + 950, tick); // implicit grace: to T0 + 1950
      assertThat(h.state.resources().get("r").lease().expiresAtMs()).isEqualTo(T0 + 1950);

      h.inTerm(2, T0 + 1900, new Command.Takeover());
      h.inTerm(3, T0 + 1940, new Command.Takeover());
      h.inTerm(4, T0 + 1945, tick);

      assertThat(h.state.resources().get("r").lease().expiresAtMs()).isEqualTo(T0 + 1950);
      assertThat(h.inTerm(4, T0 + 1950, new Command.Acquire("r", "B", 1000)).code())
          .isEqualTo(GRANTED);
    }

    // A Takeover entry that itself opens the new term applies the grace once (same result as a lone
    // takeover).
    @Test
    void takeoverOpeningTermAppliesGraceOnce() {
      Harness h = new Harness();
      h.inTerm(1, T0, new Command.Acquire("r", "A", 1000));
      h.inTerm(1, T0 + 900, tick);

      h.inTerm(2, T0 + 950, new Command.Takeover());

      LeaseRecord lease = h.state.resources().get("r").lease();
      assertThat(lease.expiresAtMs()).isEqualTo(T0 + 1950);
      assertThat(lease.graceUsed()).isTrue();
    }

    // An entry of an older term (a deposed leader's) triggers no grace and does not move the term
    // back.
    @Test
    void olderTermGivesNoGrace() {
      Harness h = new Harness();
      long t = h.inTerm(2, T0, new Command.Acquire("r", "A", 1000)).token();
      h.inTerm(2, T0 + 900, tick);

      assertThat(h.inTerm(1, T0 + 1500, put("r", t)).code()).isEqualTo(LEASE_EXPIRED);
      assertThat(h.state.term()).isEqualTo(2);
    }

    private Command put(String resource, long token) {
      return new Command.Write(resource, token, List.of(KeyWrite.put("k", bytes("v"))), "");
    }
  }

  @Nested
  class SeedScenario {

    // The README's table: A's lease expires while paused, B acquires (t' > t) and writes; A's late
    // write is STALE_TOKEN carrying t', and B's value stays. A is already fenced right after B
    // acquires, before B writes.
    @Test
    void pausedHolderIsFencedOut() {
      Harness h = new Harness();
      String res = "daily-sales-report";
      long t1 = T0;
      long t = h.acquire(t1, res, "worker-A", 30_000).token();
      assertThat(h.put(t1 + 1000, res, t, "2026-11-29", "draft-A").code()).isEqualTo(ACCEPTED);

      // T3: A is paused; its lease expires. T4: B acquires.
      long t4 = t1 + 31_000;
      Outcome bAcq = h.acquire(t4, res, "worker-B", 30_000);
      assertThat(bAcq.code()).isEqualTo(GRANTED);
      long tPrime = bAcq.token();
      assertThat(tPrime).isGreaterThan(t);

      // Before B writes, A's write is already rejected, and A's old value is untouched.
      String beforeEarly = h.dump();
      Outcome early = h.put(t4 + 1, res, t, "2026-11-29", "report-A");
      assertThat(early.code()).isEqualTo(STALE_TOKEN);
      assertThat(early.sentToken()).isEqualTo(t);
      assertThat(early.currentToken()).isEqualTo(tPrime);
      assertThat(early.holderOwner()).isEqualTo("worker-B");
      assertThat(h.dump()).isEqualTo(beforeEarly);

      // T5: B writes with t'.
      Outcome bWrite = h.put(t4 + 2000, res, tPrime, "2026-11-29", "report-B");
      assertThat(bWrite.code()).isEqualTo(ACCEPTED);
      assertThat(bWrite.acceptedToken()).isEqualTo(tPrime);

      // T6: A resumes and writes with t.
      Outcome late = h.put(t4 + 3000, res, t, "2026-11-29", "report-A");
      assertThat(late.code()).isEqualTo(STALE_TOKEN);
      assertThat(late.sentToken()).isEqualTo(t);
      assertThat(late.currentToken()).isEqualTo(tPrime);

      Outcome read = h.state.read(res, "2026-11-29");
      assertThat(text(read.value())).isEqualTo("report-B");
      assertThat(read.acceptedToken()).isEqualTo(tPrime);
    }
  }

  @Nested
  class Lineage {
    private static final long SEED = 0x5eed_0001L;

    // A replica that meets a takeover naming another lineage stops before applying it: nothing
    // changes, and the exception says what to do.
    @Test
    void takeoverOfAnotherLineageStopsTheReplicaUnchanged() {
      Harness h = new Harness();
      h.acquire(T0, "r", "A", 10_000);
      String before = h.dump();

      assertThatThrownBy(() -> h.apply(T0 + 100, Command.Takeover.from(SEED)))
          .isInstanceOf(ReplicaDivergedException.class)
          .hasMessageContaining("restore");

      assertThat(h.dump()).isEqualTo(before);
      assertThat(h.state.nowMs()).isEqualTo(T0);
    }

    // Replicas of one lineage apply takeovers as usual; so do entries written before lineages
    // existed.
    @Test
    void takeoverOfTheSameLineageOrNoneApplies() {
      FencingState restored =
          FencingState.restore(Harness.LIMITS, new StateImage(0, T0, 41, 0, List.of()));
      restored.beginNewEpoch(SEED);

      assertThat(restored.lineage()).isEqualTo(SEED);
      assertThat(restored.apply(Command.Takeover.from(SEED), 1, T0 + 10).code()).isEqualTo(OK);
      assertThat(restored.apply(new Command.Takeover(), 2, T0 + 20).code()).isEqualTo(OK);
      assertThat(new Harness().apply(T0, Command.Takeover.from(0)).code()).isEqualTo(OK);
    }

    // A seeded replica must not follow a log that started empty either.
    @Test
    void seededReplicaRefusesALogThatStartedEmpty() {
      FencingState restored =
          FencingState.restore(Harness.LIMITS, new StateImage(0, T0, 41, 0, List.of()));
      restored.beginNewEpoch(SEED);

      assertThatThrownBy(() -> restored.apply(Command.Takeover.from(0), 1, T0 + 10))
          .isInstanceOf(ReplicaDivergedException.class)
          .hasMessageContaining("did not start from one");
    }

    // 0 is reserved for "began empty", so a restored lineage can never pass for it.
    @Test
    void restoredLineageIsNeverZero() {
      FencingState restored =
          FencingState.restore(Harness.LIMITS, new StateImage(0, T0, 41, 0, List.of()));

      assertThatThrownBy(() -> restored.beginNewEpoch(0))
          .isInstanceOf(IllegalArgumentException.class);
      assertThat(restored.lastIssuedToken()).isEqualTo(41);
    }
  }
}
