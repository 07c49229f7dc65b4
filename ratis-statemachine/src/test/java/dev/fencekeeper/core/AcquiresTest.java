package dev.fencekeeper.core;

import static dev.fencekeeper.core.Code.GRANTED;
import static dev.fencekeeper.core.Code.HELD;
import static dev.fencekeeper.core.Code.RELEASED;
import static dev.fencekeeper.core.Harness.T0;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Acquires and the queue behind a held resource ({@link Acquires}), through {@link
 * FencingState#apply}.
 */
// Preemptive: a core stuck in a loop fails the test instead of hanging the build.
@Timeout(value = 5, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AcquiresTest {

  @Nested
  class Acquire {

    // A free resource is granted: a positive token, the owner, and expiresAt = stamp + ttl.
    @Test
    void grantsFreeResource() {
      Harness h = new Harness();
      Outcome o = h.acquire(T0, "r", "A", 1000);

      assertThat(o.code()).isEqualTo(GRANTED);
      assertThat(o.token()).isPositive();
      assertThat(o.currentToken()).isEqualTo(o.token());
      assertThat(o.holderOwner()).isEqualTo("A");
      assertThat(o.expiresAtMs()).isEqualTo(T0 + 1000);
      assertThat(o.ttlMs()).isEqualTo(1000);
      assertThat(h.state.lastIssuedToken()).isEqualTo(o.token());
      assertThat(h.state.resources().get("r").lease())
          .isEqualTo(new LeaseRecord(o.token(), "A", 1000, T0 + 1000, false));
    }

    // A live lease answers HELD with the holder's token, owner and expiresAt, and changes nothing.
    @Test
    void heldWhileLive() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      String before = h.dump();

      Outcome o = h.acquire(T0 + 999, "r", "B", 5000);

      assertThat(o.code()).isEqualTo(HELD);
      assertThat(o.token()).isEqualTo(t);
      assertThat(o.currentToken()).isEqualTo(t);
      assertThat(o.holderOwner()).isEqualTo("A");
      assertThat(o.expiresAtMs()).isEqualTo(T0 + 1000);
      assertThat(h.dump()).isEqualTo(before);
    }

    // Expiry is exclusive: at expiresAt the lease is over and a new acquire gets a strictly greater
    // token.
    @Test
    void grantsAtExpiryWithGreaterToken() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();

      assertThat(h.acquire(T0 + 999, "r", "B", 1000).code()).isEqualTo(HELD);
      Outcome o = h.acquire(T0 + 1000, "r", "B", 1000);

      assertThat(o.code()).isEqualTo(GRANTED);
      assertThat(o.token()).isGreaterThan(t);
      assertThat(o.holderOwner()).isEqualTo("B");
      assertThat(o.expiresAtMs()).isEqualTo(T0 + 2000);
    }

    // A released resource can be acquired again at once, with a greater token.
    @Test
    void grantsAfterRelease() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 10_000).token();
      assertThat(h.release(T0 + 1, "r", t).code()).isEqualTo(RELEASED);

      Outcome o = h.acquire(T0 + 2, "r", "B", 10_000);

      assertThat(o.code()).isEqualTo(GRANTED);
      assertThat(o.token()).isGreaterThan(t);
    }

    // Tokens come from one group-wide sequence: every grant, on any resource, exceeds all earlier
    // grants.
    @Test
    void tokensIncreaseAcrossResources() {
      Harness h = new Harness();
      long t1 = h.acquire(T0, "r1", "A", 1000).token();
      h.tick(T0 + 10);
      long t2 = h.acquire(T0 + 20, "r2", "A", 1000).token();
      long t3 = h.acquire(T0 + 1000, "r1", "B", 1000).token();
      long t4 = h.acquire(T0 + 1001, "r3", "C", 1000).token();

      assertThat(List.of(t1, t2, t3, t4)).isSorted().doesNotHaveDuplicates();
      assertThat(t1).isPositive();
      assertThat(h.state.lastIssuedToken()).isEqualTo(t4);
    }

    // A restored state never issues a token at or below its restored sequence, even if the log
    // index restarts.
    @Test
    void restoredSequenceNeverGoesBack() {
      FencingState s =
          FencingState.restore(
              Harness.LIMITS,
              new StateImage(
                  0, T0, 100, 0, List.of(StateImage.Resource.of("r", 90, null, new TreeMap<>()))));

      Outcome o = s.apply(new Command.Acquire("r", "A", 1000), 1, T0 + 1);

      assertThat(o.code()).isEqualTo(GRANTED);
      assertThat(o.token()).isGreaterThan(100);
      s.raiseTokenFloor(5); // lower floor: ignored
      assertThat(s.lastIssuedToken()).isEqualTo(o.token());
      s.raiseTokenFloor(500);
      assertThat(s.apply(new Command.Acquire("q", "A", 1000), 2, T0 + 2).token())
          .isGreaterThan(500);
    }
  }
}
