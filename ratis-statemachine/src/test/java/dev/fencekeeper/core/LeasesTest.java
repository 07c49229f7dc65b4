package dev.fencekeeper.core;

import static dev.fencekeeper.core.Code.ACCEPTED;
import static dev.fencekeeper.core.Code.CURRENT;
import static dev.fencekeeper.core.Code.FOUND;
import static dev.fencekeeper.core.Code.GRANTED;
import static dev.fencekeeper.core.Code.HELD;
import static dev.fencekeeper.core.Code.LEASE_EXPIRED;
import static dev.fencekeeper.core.Code.LEASE_LOST;
import static dev.fencekeeper.core.Code.NOT_HOLDER;
import static dev.fencekeeper.core.Code.OK;
import static dev.fencekeeper.core.Code.RELEASED;
import static dev.fencekeeper.core.Code.RENEWED;
import static dev.fencekeeper.core.Code.STALE_TOKEN;
import static dev.fencekeeper.core.Harness.T0;
import static dev.fencekeeper.core.Harness.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.Limits;
import java.time.Duration;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Leases ({@link Leases}): renewing, ending, the takeover grace, wake-ups and time, through {@link
 * FencingState#apply}.
 */
// Preemptive: a core stuck in a loop fails the test instead of hanging the build.
@Timeout(value = 5, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LeasesTest {

  @Nested
  class Renew {

    // Renewing the live lease keeps its token and moves expiresAt to now + the new TTL.
    @Test
    void renewExtends() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();

      Outcome o = h.renew(T0 + 500, "r", t, 2000);

      assertThat(o.code()).isEqualTo(RENEWED);
      assertThat(o.token()).isEqualTo(t);
      assertThat(o.expiresAtMs()).isEqualTo(T0 + 2500);
      assertThat(o.ttlMs()).isEqualTo(2000);
      assertThat(h.state.lease("r").expiresAtMs()).isEqualTo(T0 + 2500);
      assertThat(h.acquire(T0 + 2499, "r", "B", 1000).code()).isEqualTo(HELD);
    }

    // A renew with ttl 0 keeps the lease's own TTL.
    @Test
    void zeroTtlKeepsOwnTtl() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();

      Outcome o = h.renew(T0 + 700, "r", t, 0);

      assertThat(o.code()).isEqualTo(RENEWED);
      assertThat(o.expiresAtMs()).isEqualTo(T0 + 1700);
      assertThat(o.ttlMs()).isEqualTo(1000);
    }

    // A renew at or after expiry answers LEASE_LOST with the current token and does not revive the
    // lease.
    @Test
    void afterExpiryLeaseLost() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      String before = h.dump();

      Outcome o = h.renew(T0 + 1000, "r", t, 1000);

      assertThat(o.code()).isEqualTo(LEASE_LOST);
      assertThat(o.currentToken()).isEqualTo(t);
      assertThat(o.sentToken()).isEqualTo(t);
      assertThat(h.dump()).isEqualTo(before);
      assertThat(h.acquire(T0 + 1000, "r", "B", 1000).code()).isEqualTo(GRANTED);
    }

    // A superseded token's renew answers LEASE_LOST naming the newer token and its holder, and
    // changes nothing.
    @Test
    void supersededLeaseLost() {
      Harness h = new Harness();
      long tA = h.acquire(T0, "r", "A", 1000).token();
      long tB = h.acquire(T0 + 1000, "r", "B", 1000).token();
      String before = h.dump();

      Outcome o = h.renew(T0 + 1100, "r", tA, 1000);

      assertThat(o.code()).isEqualTo(LEASE_LOST);
      assertThat(o.currentToken()).isEqualTo(tB);
      assertThat(o.sentToken()).isEqualTo(tA);
      assertThat(o.holderOwner()).isEqualTo("B");
      assertThat(h.dump()).isEqualTo(before);
    }

    // A token never issued (or a resource never leased) renews nothing: LEASE_LOST.
    @Test
    void unknownTokenLeaseLost() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      String before = h.dump();

      assertThat(h.renew(T0 + 1, "r", t + 1, 1000).code()).isEqualTo(LEASE_LOST);
      assertThat(h.renew(T0 + 2, "other", t, 1000).code()).isEqualTo(LEASE_LOST);
      assertThat(h.dump()).isEqualTo(before);
    }
  }

  @Nested
  class Release {

    // Releasing the live lease ends it at once: RELEASED, not alreadyEnded, and the lease query
    // shows no holder.
    @Test
    void releaseLive() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 10_000).token();

      Outcome o = h.release(T0 + 1, "r", t);

      assertThat(o.code()).isEqualTo(RELEASED);
      assertThat(o.alreadyEnded()).isFalse();
      assertThat(o.token()).isEqualTo(t);
      Outcome lease = h.state.lease("r");
      assertThat(lease.code()).isEqualTo(FOUND);
      assertThat(lease.live()).isFalse();
      assertThat(lease.currentToken()).isEqualTo(t);
    }

    // Releasing a lease that already expired succeeds and says it had already ended.
    @Test
    void releaseExpiredAlreadyEnded() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();

      Outcome o = h.release(T0 + 1000, "r", t);

      assertThat(o.code()).isEqualTo(RELEASED);
      assertThat(o.alreadyEnded()).isTrue();
    }

    // Release is idempotent: a second release of the same lease is RELEASED with alreadyEnded and
    // changes nothing.
    @Test
    void releaseTwice() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 10_000).token();
      assertThat(h.release(T0 + 1, "r", t).alreadyEnded()).isFalse();
      String before = h.dump();

      Outcome o = h.release(T0 + 2, "r", t);

      assertThat(o.code()).isEqualTo(RELEASED);
      assertThat(o.alreadyEnded()).isTrue();
      assertThat(h.dump()).isEqualTo(before);
    }

    // A token that does not hold the live lease answers NOT_HOLDER naming the holder, and the
    // holder keeps it.
    @Test
    void notHolder() {
      Harness h = new Harness();
      long tA = h.acquire(T0, "r", "A", 1000).token();
      long tB = h.acquire(T0 + 1000, "r", "B", 1000).token();
      String before = h.dump();

      Outcome o = h.release(T0 + 1001, "r", tA);

      assertThat(o.code()).isEqualTo(NOT_HOLDER);
      assertThat(o.sentToken()).isEqualTo(tA);
      assertThat(o.currentToken()).isEqualTo(tB);
      assertThat(o.holderOwner()).isEqualTo("B");
      assertThat(h.dump()).isEqualTo(before);
      assertThat(h.state.validateToken("r", tB).code()).isEqualTo(CURRENT);
    }

    // A token never issued for the resource (or an unknown resource) answers NOT_HOLDER and changes
    // nothing.
    @Test
    void unknownTokenNotHolder() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      String before = h.dump();

      assertThat(h.release(T0 + 1, "r", t + 1).code()).isEqualTo(NOT_HOLDER);
      assertThat(h.release(T0 + 2, "other", t).code()).isEqualTo(NOT_HOLDER);
      assertThat(h.dump()).isEqualTo(before);
    }
  }

  @Nested
  class Takeover {

    // A lease live at the previous time whose expiry falls within the grace is extended to stamp +
    // grace.
    @Test
    void extendsLiveLeaseByGrace() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 10_000).token();
      h.tick(T0 + 9000);

      assertThat(h.takeover(T0 + 9500).code()).isEqualTo(OK);

      assertThat(h.state.resources().get("r").lease().expiresAtMs()).isEqualTo(T0 + 11_500);
      assertThat(h.put(T0 + 11_499, "r", t, "k", "v").code()).isEqualTo(ACCEPTED);
      assertThat(h.put(T0 + 11_500, "r", t, "k", "v").code()).isEqualTo(LEASE_EXPIRED);
    }

    // The grace never exceeds the lease's own TTL: a 500 ms lease gets at most 500 ms past the
    // takeover stamp.
    @Test
    void graceCappedByTtl() {
      Harness h = new Harness();
      h.acquire(T0, "r", "A", 500);

      h.takeover(T0 + 400);

      assertThat(h.state.resources().get("r").lease().expiresAtMs()).isEqualTo(T0 + 900);
    }

    // A lease that ran out during the election (live at the previous time) still gets the grace and
    // can renew.
    @Test
    void savesLeaseThatRanOutDuringElection() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      h.tick(T0 + 900);

      h.takeover(T0 + 1500);

      assertThat(h.state.validateToken("r", t).code()).isEqualTo(CURRENT);
      assertThat(h.state.resources().get("r").lease().expiresAtMs()).isEqualTo(T0 + 2500);
      assertThat(h.renew(T0 + 1600, "r", t, 0).code()).isEqualTo(RENEWED);
    }

    // A lease already dead at the previous time gets no grace: the takeover changes nothing and B
    // can acquire.
    @Test
    void ignoresDeadLease() {
      Harness h = new Harness();
      h.acquire(T0, "r", "A", 1000);
      h.tick(T0 + 1000);
      String before = h.dump();

      h.takeover(T0 + 1100);

      assertThat(h.dump()).isEqualTo(before);
      assertThat(h.acquire(T0 + 1100, "r", "B", 1000).code()).isEqualTo(GRANTED);
    }

    // Takeover never shortens a lease that already runs past stamp + grace.
    @Test
    void neverShortens() {
      Harness h = new Harness();
      h.acquire(T0, "r", "A", 10_000);
      String before = h.dump();

      h.takeover(T0 + 100);

      assertThat(h.dump()).isEqualTo(before);
      assertThat(h.state.resources().get("r").lease().expiresAtMs()).isEqualTo(T0 + 10_000);
    }

    // Back-to-back takeovers give a lease one grace at most: a dead holder's lease ends at the
    // first extension.
    @Test
    void backToBackTakeoversDoNotKeepDeadLeaseAlive() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      h.tick(T0 + 900);
      h.takeover(T0 + 950); // extended to T0 + 1950 (min(grace 2 s, ttl 1 s) past the stamp)
      assertThat(h.state.resources().get("r").lease().expiresAtMs()).isEqualTo(T0 + 1950);

      for (long at = T0 + 1000; at < T0 + 1950; at += 100) {
        h.takeover(at);
        assertThat(h.state.resources().get("r").lease().expiresAtMs())
            .as("after takeover at +%d", at - T0)
            .isEqualTo(T0 + 1950);
      }

      assertThat(h.put(T0 + 1950, "r", t, "k", "v").code()).isEqualTo(LEASE_EXPIRED);
      assertThat(h.acquire(T0 + 1950, "r", "B", 1000).code()).isEqualTo(GRANTED);
    }

    // A renewal re-arms the grace: a renewed lease is extended by a later takeover again.
    @Test
    void renewalRearmsGrace() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      h.takeover(T0 + 900); // to T0 + 1900, grace used
      h.takeover(T0 + 1800); // no second grace
      assertThat(h.state.resources().get("r").lease().expiresAtMs()).isEqualTo(T0 + 1900);

      assertThat(h.renew(T0 + 1850, "r", t, 0).expiresAtMs()).isEqualTo(T0 + 2850);
      h.takeover(T0 + 2800);

      assertThat(h.state.resources().get("r").lease().expiresAtMs()).isEqualTo(T0 + 3800);
    }

    // A takeover stamped behind state-machine time extends from state-machine time, never beyond
    // min(grace, ttl).
    @Test
    void backwardsStampedTakeover() {
      Harness h = new Harness();
      h.acquire(T0, "r", "A", 1000);
      h.tick(T0 + 800);

      h.takeover(T0 + 100);

      assertThat(h.state.nowMs()).isEqualTo(T0 + 800);
      assertThat(h.state.resources().get("r").lease().expiresAtMs()).isEqualTo(T0 + 1800);
    }
  }

  @Nested
  class Wakeups {

    // nextWakeupMs is Long.MAX_VALUE for an empty state and never later than the earliest live
    // lease's expiry (so the leader ticks in time); it follows acquire, renew, takeover and
    // release, and is never overdue.
    @Test
    void nextWakeupFollowsLeases() {
      Harness h =
          new Harness(); // idle records are forgotten after 10 min: later than every lease here
      assertThat(h.state.nextWakeupMs()).isEqualTo(Long.MAX_VALUE);
      long t1 = h.acquire(T0, "r1", "A", 1000).token();
      assertThat(h.state.nextWakeupMs()).isEqualTo(T0 + 1000);
      long t2 = h.acquire(T0 + 10, "r2", "B", 500).token();
      assertThat(h.state.nextWakeupMs()).isEqualTo(T0 + 510);

      h.renew(T0 + 100, "r2", t2, 5000);
      assertThat(h.state.nextWakeupMs()).isEqualTo(T0 + 1000);
      h.takeover(T0 + 900); // r1 to T0 + 1900; r2 (T0 + 5100, beyond the grace) untouched
      assertThat(h.state.nextWakeupMs()).isEqualTo(T0 + 1900);
      h.release(T0 + 901, "r1", t1);
      assertThat(h.state.nextWakeupMs()).isEqualTo(T0 + 5100);
      h.tick(T0 + 5099);
      assertThat(h.state.nextWakeupMs()).isEqualTo(T0 + 5100);
      h.tick(T0 + 5100);
      assertThat(h.state.nextWakeupMs()).isGreaterThan(T0 + 5100); // nothing due any more
    }

    // Two leases expiring at the same instant are both tracked; ending one leaves the other's
    // wake-up.
    @Test
    void equalDeadlinesAreKeptApart() {
      Harness h = new Harness();
      long t1 = h.acquire(T0, "r1", "A", 1000).token();
      h.acquire(T0, "r2", "B", 1000);

      h.release(T0 + 1, "r1", t1);

      assertThat(h.state.nextWakeupMs()).isEqualTo(T0 + 1000);
    }
  }

  @Nested
  class Time {

    // State-machine time never goes backwards: an older stamp neither moves now back nor revives an
    // expired lease.
    @Test
    void neverGoesBackwards() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      h.tick(T0 + 2000);

      Outcome late = h.put(T0 + 500, "r", t, "k", "v");

      assertThat(late.code()).isEqualTo(LEASE_EXPIRED);
      assertThat(late.nowMs()).isEqualTo(T0 + 2000);
      assertThat(h.state.nowMs()).isEqualTo(T0 + 2000);
      Outcome b = h.acquire(T0 + 100, "r", "B", 1000);
      assertThat(b.code()).isEqualTo(GRANTED);
      assertThat(b.expiresAtMs())
          .isEqualTo(T0 + 3000); // from state-machine time, not from the old stamp
    }

    // No clock skew makes a stale write succeed: stamps far in the past or future still answer
    // STALE_TOKEN.
    @Test
    void skewNeverLetsStaleWriteThrough() {
      Harness h = new Harness();
      long tA = h.acquire(T0, "r", "A", 1000).token();
      long tB = h.acquire(T0 + 1000, "r", "B", 60_000).token();
      h.put(T0 + 1001, "r", tB, "k", "B");

      assertThat(h.put(T0 - 3_600_000, "r", tA, "k", "A").code()).isEqualTo(STALE_TOKEN);
      assertThat(h.put(T0 + 500, "r", tA, "k", "A").code()).isEqualTo(STALE_TOKEN);
      // A leader clock an hour ahead ends B's lease early (liveness) but A stays fenced out
      // (safety).
      assertThat(h.put(T0 + 3_600_000, "r", tA, "k", "A").code()).isEqualTo(STALE_TOKEN);
      assertThat(h.put(T0 + 3_600_001, "r", tB, "k", "B2").code()).isEqualTo(LEASE_EXPIRED);
      assertThat(text(h.state.read("r", "k").value())).isEqualTo("B");
    }

    // Absurd stamps (zero, negative, the end of time) never throw and never let a superseded token
    // write.
    @Test
    void absurdStampsStaySafe() {
      Harness h = new Harness();
      long tA = h.acquire(T0, "r", "A", 1000).token();
      long tB = h.acquire(T0 + 1000, "r", "B", 60_000).token();

      assertThat(h.put(0, "r", tA, "k", "A").code()).isEqualTo(STALE_TOKEN);
      assertThat(h.put(Long.MIN_VALUE, "r", tA, "k", "A").code()).isEqualTo(STALE_TOKEN);
      assertThat(h.put(T0 + 1001, "r", tB, "k", "B").code()).isEqualTo(ACCEPTED);
      assertThat(h.put(Long.MAX_VALUE, "r", tA, "k", "A").code()).isEqualTo(STALE_TOKEN);
      Outcome c = h.acquire(Long.MAX_VALUE, "r", "C", 1000);
      h.takeover(Long.MAX_VALUE);
      h.put(Long.MAX_VALUE, "r", c.token(), "k", "C");

      assertThat(c.token()).isGreaterThan(tB);
      assertThat(h.put(Long.MAX_VALUE, "r", tB, "k", "B2").code()).isEqualTo(STALE_TOKEN);
      assertThat(h.state.nowMs()).isEqualTo(Long.MAX_VALUE);
      assertThat(h.state.read("r", "k").acceptedToken()).isGreaterThanOrEqualTo(tB);
    }

    // TTLs below one second work with the default limits: live until expiresAt, acquirable exactly
    // at it.
    @Test
    void subSecondTtl() {
      Limits defaults = Limits.defaults();
      assertThat(defaults.minTtl()).isLessThan(Duration.ofSeconds(1));
      Harness h = new Harness(defaults);
      long t = h.acquire(T0, "r", "A", 250).token();

      assertThat(h.put(T0 + 249, "r", t, "k", "v").code()).isEqualTo(ACCEPTED);
      assertThat(h.put(T0 + 250, "r", t, "k", "v").code()).isEqualTo(LEASE_EXPIRED);
      Outcome b = h.acquire(T0 + 250, "r", "B", defaults.minTtl().toMillis());
      assertThat(b.code()).isEqualTo(GRANTED);
      assertThat(b.expiresAtMs()).isEqualTo(T0 + 250 + defaults.minTtl().toMillis());
    }
  }
}
