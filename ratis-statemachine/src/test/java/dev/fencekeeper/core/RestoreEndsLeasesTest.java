package dev.fencekeeper.core;

import static dev.fencekeeper.core.Code.ACCEPTED;
import static dev.fencekeeper.core.Code.FOUND;
import static dev.fencekeeper.core.Code.GRANTED;
import static dev.fencekeeper.core.Code.LEASE_EXPIRED;
import static dev.fencekeeper.core.Code.LEASE_LOST;
import static dev.fencekeeper.core.Code.LOCK_DELAYED;
import static dev.fencekeeper.core.Code.STALE_TOKEN;
import static dev.fencekeeper.core.Code.WAITING;
import static dev.fencekeeper.core.Harness.T0;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A state loaded from a backup begins a new cluster ({@link FencingState#beginNewEpoch}): no lease
 * of the old cluster survives it, so a holder the old cluster had already fenced out cannot write
 * again with the token the backup still knew as live. Values, tokens and running lock-delays are
 * kept.
 */
class RestoreEndsLeasesTest {
  private static final long SEED_LINEAGE = 0x5eed;

  // Guarantee: after the restore, the old live lease's token is refused (LEASE_EXPIRED, saying to
  // acquire again), a renewal of it is LEASE_LOST, and the resource is free: a new holder gets a
  // token above the floor, after which the old token is STALE_TOKEN.
  @Test
  void liveLeaseEndsAndItsTokenWritesNothing() {
    Harness h = new Harness();
    long old = h.acquire(T0, "r2", "worker-a", 60_000).token();
    assertThat(h.put(T0 + 1, "r2", old, "k", "before-backup").code()).isEqualTo(ACCEPTED);

    h.state.beginNewEpoch(SEED_LINEAGE);
    long floor = h.state.lastIssuedToken();

    assertThat(h.state.lease("r2").live()).isFalse();
    Outcome write = h.put(T0 + 2, "r2", old, "k", "from-the-fenced-holder");
    assertThat(write.code()).isEqualTo(LEASE_EXPIRED);
    assertThat(write.message()).contains("restored from a backup").contains("acquire 'r2' again");
    Outcome renew = h.renew(T0 + 3, "r2", old, 60_000);
    assertThat(renew.code()).isEqualTo(LEASE_LOST);
    assertThat(renew.message()).contains("restored from a backup");
    assertThat(value(h, "r2", "k")).isEqualTo("before-backup");

    Outcome again = h.acquire(T0 + 4, "r2", "worker-a", 60_000);
    assertThat(again.code()).isEqualTo(GRANTED);
    assertThat(again.token()).isGreaterThan(floor);
    assertThat(h.put(T0 + 5, "r2", old, "k", "late").code()).isEqualTo(STALE_TOKEN);
    assertThat(h.put(T0 + 6, "r2", again.token(), "k", "after-restore").code()).isEqualTo(ACCEPTED);
  }

  // Guarantee: waiters queued at backup time are dropped (their callers' acquires belong to the old
  // cluster), so nobody is granted a lease on the restored cluster that no client asked it for.
  @Test
  void waitersAreDropped() {
    Harness h = new Harness();
    h.acquire(T0, "r", "holder", 10_000);
    Outcome queued = h.apply(T0 + 1, new Command.Acquire("r", "waiter", 1000, "wait-1", 30_000, 0));
    assertThat(queued.code()).isEqualTo(WAITING);

    h.state.beginNewEpoch(SEED_LINEAGE);
    h.tick(T0 + 2);

    assertThat(h.state.resources().get("r").waiters()).isEmpty();
    assertThat(h.state.lease("r").live()).isFalse();
    assertThat(h.state.drainEvents())
        .noneMatch(e -> e.type() == LeaseEvent.Type.ACQUIRED && e.owner().equals("waiter"));
  }

  // Guarantee: ending a lease in the restore starts no lock-delay (a new holder can acquire at
  // once), and a lock-delay already running at backup time still runs to its end.
  @Test
  void restoreStartsNoLockDelayAndKeepsARunningOne() {
    Harness h = new Harness();
    h.apply(T0, new Command.Acquire("held", "a", 10_000, "", 0, 30_000));
    h.apply(T0, new Command.Acquire("revoked", "b", 10_000, "", 0, 30_000));
    h.apply(T0 + 1, new Command.Revoke("revoked", "wedged"));

    h.state.beginNewEpoch(SEED_LINEAGE);

    assertThat(h.acquire(T0 + 2, "held", "c", 1000).code()).isEqualTo(GRANTED);
    assertThat(h.acquire(T0 + 3, "revoked", "c", 1000).code()).isEqualTo(LOCK_DELAYED);
    assertThat(h.acquire(T0 + 1 + 30_000, "revoked", "c", 1000).code()).isEqualTo(GRANTED);
  }

  // Guarantee: the restored state is stable: every replica seeded from the same file agrees, and
  // nothing of it is an event of the new cluster's log.
  @Test
  void endingLeasesEmitsNoEvents() {
    Harness h = new Harness();
    h.acquire(T0, "r", "a", 10_000);
    h.state.drainEvents();

    h.state.beginNewEpoch(SEED_LINEAGE);

    assertThat(h.state.drainEvents()).isEmpty();
    assertThat(h.state.lease("r").code()).isEqualTo(FOUND);
  }

  private static String value(Harness h, String resource, String key) {
    return new String(h.state.read(resource, key).value(), StandardCharsets.UTF_8);
  }
}
