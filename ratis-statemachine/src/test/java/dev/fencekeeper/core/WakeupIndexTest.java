package dev.fencekeeper.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The wake-up index files each resource once, under the earliest time it needs attention. */
class WakeupIndexTest {
  private static final long IDLE_MS = 1_000;
  private final WakeupIndex index = new WakeupIndex(IDLE_MS);

  private static ResourceRecord leased(String name, long expiresAtMs) {
    ResourceRecord r = new ResourceRecord(name);
    r.setLease(new LeaseRecord(1, "A", 100, expiresAtMs, false));
    return r;
  }

  // Guarantee: due resources come out earliest first, and only once their time has come.
  @Test
  void dueResourcesComeOutEarliestFirst() {
    index.refile(leased("late", 300), 0);
    index.refile(leased("early", 100), 0);

    assertThat(index.nextWakeupMs()).isEqualTo(100);
    assertThat(index.pollDue(99)).isNull();
    assertThat(index.pollDue(300)).isEqualTo("early");
    assertThat(index.pollDue(300)).isEqualTo("late");
    assertThat(index.pollDue(300)).isNull();
    assertThat(index.nextWakeupMs()).isEqualTo(Long.MAX_VALUE);
  }

  // Guarantee: refiling replaces the earlier filing, so a renewed lease is not woken at its old
  // expiry.
  @Test
  void refilingReplacesTheEarlierFiling() {
    ResourceRecord r = leased("r", 100);
    index.refile(r, 0);
    r.setLease(new LeaseRecord(1, "A", 100, 500, false));

    index.refile(r, 50);

    assertThat(index.nextWakeupMs()).isEqualTo(500);
    assertThat(index.pollDue(100)).isNull();
  }

  // Guarantee: an idle record is filed for when it may be forgotten; a removed one is not filed.
  @Test
  void idleRecordsAreFiledForForgettingAndRemovedOnesNotAtAll() {
    ResourceRecord idle = new ResourceRecord("idle");
    idle.setIdleSinceMs(40);
    ResourceRecord gone = leased("gone", 10);

    index.refile(idle, 50);
    index.refile(gone, 0);
    index.remove(gone);

    assertThat(index.nextWakeupMs()).isEqualTo(40 + IDLE_MS);
    assertThat(index.pollDue(Long.MAX_VALUE)).isEqualTo("idle");
    assertThat(index.pollDue(Long.MAX_VALUE)).isNull();
  }
}
