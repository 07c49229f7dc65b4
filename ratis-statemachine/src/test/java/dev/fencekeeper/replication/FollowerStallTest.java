package dev.fencekeeper.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.replication.FollowerStall.Verdict;
import org.junit.jupiter.api.Test;

class FollowerStallTest {
  private static final long MS = 1_000_000L;
  private static final long BOUND = 20_000 * MS;

  // Guarantee: a follower that asks for an index the leader counts as already replicated to it
  // (its storage was wiped) gets a fresh appender after two such replies, not after the bound.
  @Test
  void aFollowerLackingMatchedEntriesIsRestartedAfterTwoReplies() {
    FollowerStall stall = new FollowerStall(BOUND);
    assertThat(stall.onInconsistency(0, 340, 0, 786)).isEqualTo(Verdict.KEEP);
    assertThat(stall.onInconsistency(5 * MS, 340, 0, 786)).isEqualTo(Verdict.RESTART);
    assertThat(stall.reason()).contains("asks for index 0").contains("up to 340");
  }

  // Guarantee: one reply below the match index followed by an ordinary one does not restart.
  @Test
  void oneLostEntriesReplyAloneIsNotEnough() {
    FollowerStall stall = new FollowerStall(BOUND);
    assertThat(stall.onInconsistency(0, 340, 100, 786)).isEqualTo(Verdict.KEEP);
    assertThat(stall.onInconsistency(MS, 340, 341, 786)).isEqualTo(Verdict.KEEP);
    assertThat(stall.onInconsistency(2 * MS, 340, 100, 786)).isEqualTo(Verdict.KEEP);
  }

  // Guarantee: a follower that asks for the entry after its match index but never receives it
  // (heartbeats only) is restarted once the match index has not moved for the bound while the
  // leader's log is ahead, and not before.
  @Test
  void aStalledMatchIndexIsRestartedAfterTheBound() {
    FollowerStall stall = new FollowerStall(BOUND);
    long t = 0;
    for (; t < BOUND; t += 5_000 * MS) {
      assertThat(stall.onInconsistency(t, 340, 341, 786))
          .as("at %d ms", t / MS)
          .isEqualTo(Verdict.KEEP);
    }
    assertThat(stall.onInconsistency(BOUND, 340, 341, 786)).isEqualTo(Verdict.RESTART);
    assertThat(stall.reason()).contains("stayed at 340").contains("reached 785");
  }

  // Guarantee: a match index that moves starts the bound again.
  @Test
  void aMovingMatchIndexIsNotStalled() {
    FollowerStall stall = new FollowerStall(BOUND);
    long match = 100;
    for (long t = 0; t < 3 * BOUND; t += 5_000 * MS) {
      match += 10;
      assertThat(stall.onInconsistency(t, match, match + 1, 786)).isEqualTo(Verdict.KEEP);
    }
  }

  // Guarantee: a follower level with the leader's log is not restarted however long it waits.
  @Test
  void nothingToSendIsNotAStall() {
    FollowerStall stall = new FollowerStall(BOUND);
    for (long t = 0; t < 3 * BOUND; t += 5_000 * MS) {
      assertThat(stall.onInconsistency(t, 785, 786, 786)).isEqualTo(Verdict.KEEP);
    }
  }

  // Guarantee: two INCONSISTENCY replies further apart than the bound are not one stall.
  @Test
  void repliesFarApartAreSeparateEpisodes() {
    FollowerStall stall = new FollowerStall(BOUND);
    assertThat(stall.onInconsistency(0, 340, 341, 786)).isEqualTo(Verdict.KEEP);
    assertThat(stall.onInconsistency(BOUND + MS, 340, 341, 786)).isEqualTo(Verdict.KEEP);
  }

  @Test
  void theBoundMustBePositive() {
    assertThatThrownBy(() -> new FollowerStall(0)).isInstanceOf(IllegalArgumentException.class);
  }
}
