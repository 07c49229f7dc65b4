package dev.fencekeeper.core;

import static dev.fencekeeper.core.Code.ACCEPTED;
import static dev.fencekeeper.core.Code.FOUND;
import static dev.fencekeeper.core.Code.LEASE_EXPIRED;
import static dev.fencekeeper.core.Code.NOT_FOUND;
import static dev.fencekeeper.core.Code.STALE_TOKEN;
import static dev.fencekeeper.core.Code.UNKNOWN_TOKEN;
import static dev.fencekeeper.core.Harness.T0;
import static dev.fencekeeper.core.Harness.bytes;
import static dev.fencekeeper.core.Harness.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.core.Command.KeyWrite;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fenced values and their write receipts ({@link FencedValues}), through {@link
 * FencingState#apply}.
 */
// Preemptive: a core stuck in a loop fails the test instead of hanging the build.
@Timeout(value = 5, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FencedValuesTest {

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
    // another payload, and changes nothing: same version, same stamp, same value.
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
}
