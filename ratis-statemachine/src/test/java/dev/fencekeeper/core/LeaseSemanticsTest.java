package dev.fencekeeper.core;

import static dev.fencekeeper.core.Harness.T0;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.Limits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Waiting, lock-delay, idempotent acquire, events and idle clean-up in the pure core. */
class LeaseSemanticsTest {
  static final Limits LIMITS =
      Harness.LIMITS.toBuilder()
          .idleTimeout(Duration.ofSeconds(30))
          .waiterLiveness(Duration.ofSeconds(5))
          .maxWaitersPerResource(16)
          .build();

  final Harness h = new Harness(LIMITS);

  Outcome acquire(long at, String owner, String requestId, long waitMs, long lockDelayMs) {
    return h.apply(at, new Command.Acquire("r", owner, 1000, requestId, waitMs, lockDelayMs));
  }

  // Guarantee: waiters are granted in arrival order, each as soon as the previous lease ends.
  @Test
  void waitersAreServedFirstInFirstOut() {
    long holder = acquire(T0, "holder", "h", 0, 0).token();
    for (int i = 1; i <= 5; i++) {
      Outcome queued = acquire(T0 + i, "w" + i, "req-" + i, 10_000, 0);
      assertThat(queued.code()).isEqualTo(Code.WAITING);
      assertThat(queued.position()).isEqualTo(i);
      // The entry that queued it: a waiter's watch starts there, not at the resource's first event.
      assertThat(queued.queuedAtIndex()).isEqualTo(h.index);
    }
    h.release(T0 + 10, "r", holder);
    List<String> order = new ArrayList<>();
    long lastToken = holder;
    for (int i = 1; i <= 5; i++) {
      Outcome lease = h.state.lease("r");
      assertThat(lease.token()).isGreaterThan(lastToken);
      order.add(lease.holderOwner());
      lastToken = lease.token();
      // The waiter learns of its grant by re-sending its acquire: same request id, same token.
      Outcome again = acquire(T0 + 10 + i, "w" + i, "req-" + i, 10_000, 0);
      assertThat(again.code()).isEqualTo(Code.GRANTED);
      assertThat(again.token()).isEqualTo(lease.token());
      h.release(T0 + 10 + i, "r", lease.token());
    }
    assertThat(order).containsExactly("w1", "w2", "w3", "w4", "w5");
  }

  // Guarantee: a waiter whose client stopped re-sending (crashed) or whose wait ran out is skipped:
  // no lease is granted that nobody will use.
  @Test
  void absentWaitersAreNeverGranted() {
    long holder = acquire(T0, "holder", "h", 0, 0).token();
    acquire(T0 + 1, "gone", "req-gone", 60_000, 0); // never re-sent: liveness 5 s
    acquire(T0 + 2, "impatient", "req-short", 1_000, 0); // its wait ends at T0 + 1002
    acquire(T0 + 3, "present", "req-present", 60_000, 0);
    acquire(T0 + 4_000, "present", "req-present", 60_000, 0); // keeps its place alive
    h.release(T0 + 6_000, "r", holder);
    Outcome lease = h.state.lease("r");
    assertThat(lease.holderOwner()).isEqualTo("present");
  }

  // Guarantee: a grant to a waiter happens only once the previous lease is really over — when it
  // expires, not before (etcd once granted a queued lock without that check).
  @Test
  void waiterIsGrantedWhenTheHolderExpiresAndNotBefore() {
    long holder = acquire(T0, "holder", "h", 0, 0).token(); // TTL 1 s
    acquire(T0 + 1, "w", "req-w", 10_000, 0);
    h.tick(T0 + 999);
    h.state.drainEvents();
    assertThat(h.state.lease("r").token()).isEqualTo(holder);
    h.tick(T0 + 1000);
    Outcome lease = h.state.lease("r");
    assertThat(lease.holderOwner()).isEqualTo("w");
    assertThat(lease.token()).isGreaterThan(holder);
    assertThat(h.state.drainEvents())
        .extracting(LeaseEvent::type)
        .containsExactly(LeaseEvent.Type.EXPIRED, LeaseEvent.Type.ACQUIRED);
  }

  // Guarantee: the ACQUIRED event of a grant names the granted acquire's request id (a queued
  // waiter's own, or a direct acquirer's), so each waiter can tell whether a grant is its own
  // without asking.
  @Test
  void acquiredEventNamesTheGrantedRequest() {
    long holder = acquire(T0, "holder", "req-h", 0, 0).token();
    acquire(T0 + 1, "w1", "req-w1", 10_000, 0);
    acquire(T0 + 2, "w2", "req-w2", 10_000, 0);
    h.state.drainEvents();
    h.release(T0 + 10, "r", holder);

    List<LeaseEvent> events = h.state.drainEvents();
    assertThat(events)
        .extracting(LeaseEvent::type)
        .containsExactly(LeaseEvent.Type.RELEASED, LeaseEvent.Type.ACQUIRED);
    assertThat(events.get(0).requestId()).isEmpty();
    assertThat(events.get(1).requestId()).isEqualTo("req-w1");
    assertThat(events.get(1).owner()).isEqualTo("w1");
  }

  // Guarantee: lock-delay holds the resource after an expiry or a revoke, but not after a release.
  @Test
  void lockDelayFollowsInvoluntaryEndsOnly() {
    long t1 = acquire(T0, "a", "a1", 0, 3_000).token();
    assertThat(acquire(T0 + 1_500, "b", "b1", 0, 0).code())
        .isEqualTo(Code.LOCK_DELAYED); // expired at +1000
    assertThat(acquire(T0 + 3_999, "b", "b2", 0, 0).code()).isEqualTo(Code.LOCK_DELAYED);
    Outcome afterDelay = acquire(T0 + 4_000, "b", "b3", 0, 3_000);
    assertThat(afterDelay.code()).isEqualTo(Code.GRANTED);
    assertThat(afterDelay.token()).isGreaterThan(t1);

    assertThat(h.apply(T0 + 4_100, new Command.Revoke("r", "stuck")).code())
        .isEqualTo(Code.REVOKED);
    assertThat(acquire(T0 + 4_200, "c", "c1", 0, 0).code()).isEqualTo(Code.LOCK_DELAYED);
    Outcome afterRevokeDelay = acquire(T0 + 7_100, "c", "c2", 0, 3_000);
    assertThat(afterRevokeDelay.code()).isEqualTo(Code.GRANTED);

    h.release(T0 + 7_200, "r", afterRevokeDelay.token());
    assertThat(acquire(T0 + 7_201, "d", "d1", 0, 0).code()).isEqualTo(Code.GRANTED);
  }

  // Guarantee: an acquire retried with its request id returns the same token; the holder acquiring
  // again with a new request id is told HELD, naming itself.
  @Test
  void acquireIsIdempotentByRequestId() {
    Outcome first = acquire(T0, "a", "req-1", 0, 0);
    Outcome retry = acquire(T0 + 10, "a", "req-1", 0, 0);
    assertThat(retry.code()).isEqualTo(Code.GRANTED);
    assertThat(retry.token()).isEqualTo(first.token());
    assertThat(h.state.lastIssuedToken()).isEqualTo(first.token());
    Outcome again = acquire(T0 + 20, "a", "req-2", 0, 0);
    assertThat(again.code()).isEqualTo(Code.HELD);
    assertThat(again.holderOwner()).isEqualTo("a");
    assertThat(again.token()).isEqualTo(first.token());
  }

  // Guarantee: a waiter that gives up leaves the line; one granted just as it gave up has that
  // grant released, so the next waiter is served.
  @Test
  void cancellingAWaitReleasesARacingGrant() {
    long holder = acquire(T0, "holder", "h", 0, 0).token();
    acquire(T0 + 1, "w1", "req-1", 10_000, 0);
    acquire(T0 + 2, "w2", "req-2", 10_000, 0);
    h.release(T0 + 3, "r", holder); // w1 is granted, but its client is giving up
    Outcome cancel = h.apply(T0 + 4, new Command.CancelWait("r", "req-1"));
    assertThat(cancel.code()).isEqualTo(Code.RELEASED);
    assertThat(h.state.lease("r").holderOwner()).isEqualTo("w2");
  }

  // Guarantee: events come in commit order with the entry that caused them, for every kind of end.
  @Test
  void eventsDescribeEveryTransition() {
    long t1 = acquire(T0, "a", "a1", 0, 0).token();
    h.renew(T0 + 100, "r", t1, 0);
    h.release(T0 + 200, "r", t1);
    long t2 = acquire(T0 + 300, "b", "b1", 0, 0).token();
    h.apply(T0 + 400, new Command.Revoke("r", "ops"));
    long t3 = acquire(T0 + 500, "c", "c1", 0, 0).token();
    // The adapter drains after every entry; undrained, the events of all entries queue up in order.
    List<LeaseEvent> all = h.state.drainEvents();
    assertThat(all)
        .extracting(LeaseEvent::type)
        .containsExactly(
            LeaseEvent.Type.ACQUIRED,
            LeaseEvent.Type.RENEWED,
            LeaseEvent.Type.RELEASED,
            LeaseEvent.Type.ACQUIRED,
            LeaseEvent.Type.REVOKED,
            LeaseEvent.Type.ACQUIRED);
    assertThat(all).extracting(LeaseEvent::token).containsExactly(t1, t1, t1, t2, t2, t3);
    h.tick(T0 + 1_500);
    assertThat(h.state.drainEvents())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.type()).isEqualTo(LeaseEvent.Type.EXPIRED);
              assertThat(e.token()).isEqualTo(t3);
              assertThat(e.atMs()).isEqualTo(T0 + 1_500);
            });
    assertThat(t2).isGreaterThan(t1);
  }

  // Guarantee: idle resources are forgotten after the idle timeout, memory returns to the baseline,
  // and tokens issued afterwards still exceed every earlier token.
  @Test
  void idleResourcesAreForgottenWithoutTokenRegression() {
    long now = T0;
    long lastToken = 0;
    for (int i = 0; i < 100_000; i++) {
      now += 1;
      Outcome grant = h.apply(now, new Command.Acquire("churn-" + i, "w", 1000, "", 0, 0));
      assertThat(grant.token()).isGreaterThan(lastToken);
      lastToken = grant.token();
      h.release(now, "churn-" + i, grant.token());
    }
    // Records idle for 30 s went while the churn ran: memory stays bounded by the idle window.
    assertThat(h.state.resources().size()).isBetween(29_000, 31_000);
    h.tick(now + 31_000); // past the 30 s idle timeout of every record
    assertThat(h.state.resources()).isEmpty();
    assertThat(h.state.nextWakeupMs()).isEqualTo(Long.MAX_VALUE);
    Outcome reused = h.apply(now + 31_001, new Command.Acquire("churn-0", "w", 1000, "", 0, 0));
    assertThat(reused.token()).isGreaterThan(lastToken);
  }

  // Guarantee: a resource holding values or a live lease is never forgotten, however long it idles.
  @Test
  void resourcesWithValuesOrLeasesAreKept() {
    long token = acquire(T0, "a", "a1", 0, 0).token();
    h.put(T0 + 1, "r", token, "k", "v");
    h.release(T0 + 2, "r", token);
    h.apply(T0 + 3, new Command.Acquire("other", "b", 60_000, "", 0, 0));
    h.tick(T0 + 3_600_000);
    assertThat(h.state.resources()).containsKey("r");
    h.tick(T0 + 3_600_001);
    assertThat(h.state.read("r", "k").code()).isEqualTo(Code.FOUND);
  }
}
