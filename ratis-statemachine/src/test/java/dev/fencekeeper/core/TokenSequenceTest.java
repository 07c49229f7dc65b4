package dev.fencekeeper.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Tokens only grow, follow the log index, and a new epoch starts above every earlier token. */
class TokenSequenceTest {
  private final TokenSequence tokens = new TokenSequence();

  // Guarantee: tokens follow the log index and stay strictly increasing within one entry.
  @Test
  void tokensFollowTheIndexAndStrictlyIncrease() {
    assertThat(tokens.issue(7)).isEqualTo(7);
    assertThat(tokens.issue(7)).isEqualTo(8);
    assertThat(tokens.issue(3)).as("a log that starts over").isEqualTo(9);
    assertThat(tokens.lastIssued()).isEqualTo(9);
  }

  // Guarantee: the floor only ever rises.
  @Test
  void floorNeverLowers() {
    tokens.raiseFloor(100);
    tokens.raiseFloor(5);

    assertThat(tokens.issue(1)).isEqualTo(101);
  }

  // Guarantee: a new epoch starts above every token of the old one, which then counts as issued
  // before the restore; a sequence that began empty has no such tokens.
  @Test
  void newEpochStartsAboveTheOldOne() {
    tokens.restore(41, 0);
    assertThat(tokens.issuedBeforeRestore(41)).isFalse();

    tokens.beginNewEpoch(99);
    long first = tokens.issue(1);

    assertThat(first).isGreaterThan(1L << FencingState.TOKEN_EPOCH_BITS);
    assertThat(tokens.lineage()).isEqualTo(99);
    assertThat(tokens.issuedBeforeRestore(41)).isTrue();
    assertThat(tokens.issuedBeforeRestore(first)).isFalse();
  }
}
