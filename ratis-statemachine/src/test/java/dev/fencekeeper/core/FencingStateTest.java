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
import static dev.fencekeeper.core.Harness.T0;
import static dev.fencekeeper.core.Harness.bytes;
import static dev.fencekeeper.core.Harness.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.Command.KeyWrite;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One table per command and result code of docs/design.md, each driven with explicit entry stamps.
 */
// Preemptive: a core stuck in a loop fails the test instead of hanging the build.
@Timeout(value = 5, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FencingStateTest {

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
  class Write {

    // The live lease's write is accepted: the key records the token, version 1 and the entry's
    // time.
    @Test
    void accepted() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();

      Outcome o = h.put(T0 + 10, "r", t, "k", "v1");

      assertThat(o.code()).isEqualTo(ACCEPTED);
      assertThat(o.token()).isEqualTo(t);
      assertThat(o.acceptedToken()).isEqualTo(t);
      assertThat(o.version()).isEqualTo(1);
      assertThat(o.key()).isEqualTo("k");
      assertThat(o.writtenAtMs()).isEqualTo(T0 + 10);
      Outcome read = h.state.read("r", "k");
      assertThat(read.code()).isEqualTo(FOUND);
      assertThat(text(read.value())).isEqualTo("v1");
      assertThat(read.acceptedToken()).isEqualTo(t);
      assertThat(read.version()).isEqualTo(1);
      assertThat(read.writtenAtMs()).isEqualTo(T0 + 10);
    }

    // Each accepted write of a key bumps its version by one and replaces the value.
    @Test
    void versionCountsAcceptedWrites() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();

      assertThat(h.put(T0 + 1, "r", t, "k", "a").version()).isEqualTo(1);
      assertThat(h.put(T0 + 2, "r", t, "k", "b").version()).isEqualTo(2);
      assertThat(h.put(T0 + 3, "r", t, "k", "c").version()).isEqualTo(3);
      assertThat(h.put(T0 + 4, "r", t, "other", "x").version()).isEqualTo(1);

      Outcome read = h.state.read("r", "k");
      assertThat(text(read.value())).isEqualTo("c");
      assertThat(read.version()).isEqualTo(3);
    }

    // A superseded token is STALE_TOKEN: sentToken echoes it, currentToken carries the newer one,
    // the value stays.
    @Test
    void staleToken() {
      Harness h = new Harness();
      long tA = h.acquire(T0, "r", "A", 1000).token();
      h.put(T0 + 1, "r", tA, "k", "fromA");
      long tB = h.acquire(T0 + 1000, "r", "B", 1000).token();
      h.put(T0 + 1001, "r", tB, "k", "fromB");
      String before = h.dump();

      Outcome o = h.put(T0 + 1002, "r", tA, "k", "late");

      assertThat(o.code()).isEqualTo(STALE_TOKEN);
      assertThat(o.sentToken()).isEqualTo(tA);
      assertThat(o.currentToken()).isEqualTo(tB);
      assertThat(o.holderOwner()).isEqualTo("B");
      assertThat(h.dump()).isEqualTo(before);
      Outcome read = h.state.read("r", "k");
      assertThat(text(read.value())).isEqualTo("fromB");
      assertThat(read.acceptedToken()).isEqualTo(tB);
      assertThat(read.version()).isEqualTo(2);
    }

    // The newest token whose lease ended by expiry gets LEASE_EXPIRED, and nothing is written.
    @Test
    void leaseExpired() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      String before = h.dump();

      Outcome o = h.put(T0 + 1000, "r", t, "k", "late");

      assertThat(o.code()).isEqualTo(LEASE_EXPIRED);
      assertThat(o.sentToken()).isEqualTo(t);
      assertThat(o.currentToken()).isEqualTo(t);
      assertThat(h.dump()).isEqualTo(before);
      assertThat(h.state.read("r", "k").code()).isEqualTo(NOT_FOUND);
    }

    // A released lease's token can no longer write: LEASE_EXPIRED.
    @Test
    void afterReleaseLeaseExpired() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 10_000).token();
      h.release(T0 + 1, "r", t);

      assertThat(h.put(T0 + 2, "r", t, "k", "v").code()).isEqualTo(LEASE_EXPIRED);
      assertThat(h.state.read("r", "k").code()).isEqualTo(NOT_FOUND);
    }

    // A token never issued for the resource, or any token on a never-leased resource, is
    // UNKNOWN_TOKEN.
    @Test
    void unknownToken() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      String before = h.dump();

      Outcome future = h.put(T0 + 1, "r", t + 1, "k", "v");
      Outcome elsewhere = h.put(T0 + 2, "other", t, "k", "v");

      assertThat(future.code()).isEqualTo(UNKNOWN_TOKEN);
      assertThat(future.sentToken()).isEqualTo(t + 1);
      assertThat(future.currentToken()).isEqualTo(t);
      assertThat(elsewhere.code()).isEqualTo(UNKNOWN_TOKEN);
      assertThat(h.dump()).isEqualTo(before);
    }

    // A multi-key write changes every key together under one token, each key with its own version.
    @Test
    void multiKeyAccepted() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      h.put(T0 + 1, "r", t, "a", "a1");
      h.put(T0 + 2, "r", t, "c", "c1");

      Outcome o =
          h.write(
              T0 + 3,
              "r",
              t,
              "",
              KeyWrite.put("a", bytes("a2")),
              KeyWrite.put("b", bytes("b1")),
              KeyWrite.delete("c"));

      assertThat(o.code()).isEqualTo(ACCEPTED);
      assertThat(o.key()).isEqualTo("a");
      assertThat(o.version()).isEqualTo(2);
      assertThat(h.state.read("r", "a").version()).isEqualTo(2);
      assertThat(text(h.state.read("r", "a").value())).isEqualTo("a2");
      assertThat(h.state.read("r", "b").version()).isEqualTo(1);
      assertThat(h.state.read("r", "b").acceptedToken()).isEqualTo(t);
      assertThat(h.state.read("r", "c").code()).isEqualTo(NOT_FOUND);
    }

    // A multi-key write with a stale token changes no key at all.
    @Test
    void multiKeyStaleChangesNothing() {
      Harness h = new Harness();
      long tA = h.acquire(T0, "r", "A", 1000).token();
      long tB = h.acquire(T0 + 1000, "r", "B", 1000).token();
      h.put(T0 + 1001, "r", tB, "b", "fromB");
      String before = h.dump();

      Outcome o =
          h.write(
              T0 + 1002,
              "r",
              tA,
              "",
              KeyWrite.put("a", bytes("x")),
              KeyWrite.put("b", bytes("x")),
              KeyWrite.delete("b2"));

      assertThat(o.code()).isEqualTo(STALE_TOKEN);
      assertThat(o.currentToken()).isEqualTo(tB);
      assertThat(h.dump()).isEqualTo(before);
    }

    // A multi-key write fenced out by one key's acceptedToken changes none of its keys (state made
    // by restore:
    // the per-key fence is defence in depth that commands alone cannot reach).
    @Test
    void multiKeyKeyFenceIsAllOrNothing() {
      FencingState s =
          FencingState.restore(
              Harness.LIMITS,
              new StateImage(
                  0,
                  T0,
                  30,
                  0,
                  List.of(
                      StateImage.Resource.of(
                          "r",
                          20,
                          new LeaseRecord(20, "A", 10_000, T0 + 10_000, false),
                          new TreeMap<>(
                              Map.of(
                                  "a",
                                  new ValueRecord(bytes("a0"), 10, 1, T0),
                                  "b",
                                  new ValueRecord(bytes("b0"), 30, 1, T0)))))));
      String before = StateDump.of(s);

      Outcome o =
          s.apply(
              new Command.Write(
                  "r",
                  20,
                  List.of(KeyWrite.put("a", bytes("new")), KeyWrite.put("b", bytes("new"))),
                  ""),
              31,
              T0 + 1);

      assertThat(o.code()).isEqualTo(STALE_TOKEN);
      assertThat(o.key()).isEqualTo("b");
      assertThat(o.acceptedToken()).isEqualTo(30);
      assertThat(StateDump.of(s)).isEqualTo(before);
    }

    // A delete removes the key: a later read is NOT_FOUND.
    @Test
    void deleteRemovesKey() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      h.put(T0 + 1, "r", t, "k", "v");

      Outcome o = h.write(T0 + 2, "r", t, "", KeyWrite.delete("k"));

      assertThat(o.code()).isEqualTo(ACCEPTED);
      assertThat(h.state.read("r", "k").code()).isEqualTo(NOT_FOUND);
      assertThat(h.state.resources().get("r").values()).doesNotContainKey("k");
    }
  }

  @Nested
  class RequestIdDedup {

    // A retried write (same request id, same lease) returns the first outcome, even later and with
    // another
    // payload, and changes nothing: same version, same stamp, same value.
    @Test
    void retryReturnsFirstOutcomeAndChangesNothing() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 10_000).token();
      Outcome first = h.write(T0 + 10, "r", t, "req-1", KeyWrite.put("a", bytes("1")));
      String before = h.dump();

      Outcome same = h.write(T0 + 20, "r", t, "req-1", KeyWrite.put("a", bytes("1")));
      Outcome other =
          h.write(
              T0 + 30,
              "r",
              t,
              "req-1",
              KeyWrite.put("a", bytes("2")),
              KeyWrite.put("b", bytes("2")));

      assertThat(first.code()).isEqualTo(ACCEPTED);
      for (Outcome retry : List.of(same, other)) {
        assertThat(retry.code()).isEqualTo(ACCEPTED);
        assertThat(retry.version()).isEqualTo(first.version());
        assertThat(retry.acceptedToken()).isEqualTo(first.acceptedToken());
        assertThat(retry.key()).isEqualTo(first.key());
        assertThat(retry.writtenAtMs()).isEqualTo(T0 + 10);
      }
      assertThat(h.dump()).isEqualTo(before);
      assertThat(text(h.state.read("r", "a").value())).isEqualTo("1");
      assertThat(h.state.read("r", "a").version()).isEqualTo(1);
      assertThat(h.state.read("r", "b").code()).isEqualTo(NOT_FOUND);
    }

    // Without a request id, a repeated write is applied again (version 2).
    @Test
    void noRequestIdNoDedup() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 10_000).token();
      h.write(T0 + 1, "r", t, "", KeyWrite.put("a", bytes("1")));

      Outcome again = h.write(T0 + 2, "r", t, "", KeyWrite.put("a", bytes("1")));

      assertThat(again.version()).isEqualTo(2);
    }

    // Request ids are scoped to a lease: the old lease's retry is STALE_TOKEN, a new lease reusing
    // the id applies.
    @Test
    void scopedToLease() {
      Harness h = new Harness();
      long tA = h.acquire(T0, "r", "A", 1000).token();
      h.write(T0 + 1, "r", tA, "req-1", KeyWrite.put("a", bytes("A")));
      long tB = h.acquire(T0 + 1000, "r", "B", 1000).token();

      Outcome retryA = h.write(T0 + 1001, "r", tA, "req-1", KeyWrite.put("a", bytes("A")));
      Outcome b = h.write(T0 + 1002, "r", tB, "req-1", KeyWrite.put("a", bytes("B")));

      assertThat(retryA.code()).isEqualTo(STALE_TOKEN);
      assertThat(retryA.currentToken()).isEqualTo(tB);
      assertThat(b.code()).isEqualTo(ACCEPTED);
      assertThat(b.version()).isEqualTo(2);
      assertThat(text(h.state.read("r", "a").value())).isEqualTo("B");
    }

    // A retry after its lease expired (no newer token) still gets the first answer, and changes
    // nothing.
    @Test
    void retryAfterExpiryReturnsFirstOutcome() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();
      Outcome first = h.write(T0 + 1, "r", t, "req-1", KeyWrite.put("a", bytes("1")));
      String before = h.dump();

      Outcome retry = h.write(T0 + 5000, "r", t, "req-1", KeyWrite.put("a", bytes("1")));
      Outcome fresh = h.write(T0 + 5001, "r", t, "req-2", KeyWrite.put("a", bytes("2")));

      assertThat(retry.code()).isEqualTo(ACCEPTED);
      assertThat(retry.version()).isEqualTo(first.version());
      assertThat(fresh.code()).isEqualTo(LEASE_EXPIRED);
      assertThat(h.dump()).isEqualTo(before);
    }

    // Receipts are bounded per lease: the newest maxRequestIdsPerLease ids stay deduplicated.
    @Test
    void newestReceiptsRemembered() {
      Harness h = new Harness();
      int cap = Harness.LIMITS.maxRequestIdsPerLease();
      long t = h.acquire(T0, "r", "A", 10_000).token();
      for (int i = 0; i <= cap; i++) {
        assertThat(
                h.write(T0 + 1 + i, "r", t, "req-" + i, KeyWrite.put("k", bytes("v" + i)))
                    .version())
            .isEqualTo(i + 1);
      }
      String before = h.dump();

      for (int i = 1; i <= cap; i++) {
        Outcome retry =
            h.write(T0 + 100 + i, "r", t, "req-" + i, KeyWrite.put("k", bytes("v" + i)));
        assertThat(retry.version()).as("retry of req-%d", i).isEqualTo(i + 1);
      }
      assertThat(h.dump()).isEqualTo(before);
      assertThat(h.state.resources().get("r").receipts()).hasSize(cap);
    }
  }

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
    // not live
    // after expiry.
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
    // newest ended lease,
    // UNKNOWN_TOKEN for tokens never issued for the resource.
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
    // not two,
    // and neither does a further term change before a renewal.
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
  class Wakeups {

    // nextWakeupMs is Long.MAX_VALUE for an empty state and never later than the earliest live
    // lease's expiry
    // (so the leader ticks in time); it follows acquire, renew, takeover and release, and is never
    // overdue.
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

  @Nested
  class SeedScenario {

    // The README's table: A's lease expires while paused, B acquires (t' > t) and writes; A's late
    // write is
    // STALE_TOKEN carrying t', and B's value stays. A is already fenced right after B acquires,
    // before B writes.
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
  class PermanentRejection {

    // A superseded token is refused up front with STALE_TOKEN carrying the newer token, and the
    // state is untouched.
    @Test
    void supersededTokenIsStale() {
      Harness h = new Harness();
      long tA = h.acquire(T0, "r", "A", 1000).token();
      long tB = h.acquire(T0 + 1000, "r", "B", 1000).token();
      String before = StateDump.withNow(h.state);

      Outcome o = h.state.permanentRejection(write("r", tA));

      assertThat(o).isNotNull();
      assertThat(o.code()).isEqualTo(STALE_TOKEN);
      assertThat(o.sentToken()).isEqualTo(tA);
      assertThat(o.currentToken()).isEqualTo(tB);
      assertThat(StateDump.withNow(h.state)).isEqualTo(before);
      assertThat(h.apply(T0 + 1001, write("r", tA)).code()).isEqualTo(STALE_TOKEN);
    }

    // Current, expired-but-newest, released and never-issued tokens must go through the log: null.
    @Test
    void nullUnlessSuperseded() {
      Harness h = new Harness();
      long t = h.acquire(T0, "r", "A", 1000).token();

      assertThat(h.state.permanentRejection(write("r", t))).isNull();
      assertThat(h.state.permanentRejection(write("r", t + 1))).isNull();
      assertThat(h.state.permanentRejection(write("never", 1))).isNull();
      h.tick(T0 + 1000);
      assertThat(h.state.permanentRejection(write("r", t))).isNull();
      long t2 = h.acquire(T0 + 1001, "r", "A", 1000).token();
      h.release(T0 + 1002, "r", t2);
      assertThat(h.state.permanentRejection(write("r", t2))).isNull();
      assertThat(h.state.permanentRejection(write("r", t)).code()).isEqualTo(STALE_TOKEN);
    }

    // Malformed input is refused up front too, as INVALID_ARGUMENT (the Javadoc's other permanent
    // case).
    @Test
    void malformedIsInvalid() {
      Harness h = new Harness();
      h.acquire(T0, "r", "A", 1000);

      Outcome o = h.state.permanentRejection(write("r", 0));

      assertThat(o).isNotNull();
      assertThat(o.code()).isEqualTo(INVALID_ARGUMENT);
      assertThat(o.message()).contains("token");
    }

    private Command.Write write(String resource, long token) {
      return new Command.Write(resource, token, List.of(KeyWrite.put("k", bytes("v"))), "");
    }
  }

  @Nested
  class Lineage {
    private static final long SEED = 0x5eed_0001L;

    // A replica that meets a takeover naming another lineage stops before applying it: nothing
    // changes,
    // and the exception says what to do.
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
