package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A node holds at most its bound of reads, and every read gives its slot back however its stream
 * ends.
 */
class ReadsInFlightTest {
  @Test
  void readsBeyondTheBoundAreRefusedUntilOneIsAnswered() {
    ReadsInFlight reads = new ReadsInFlight(2);
    ReadsInFlight.Stream a = reads.openStream();
    ReadsInFlight.Stream b = reads.openStream();
    assertThat(a.admit(1)).isTrue();
    assertThat(b.admit(1)).isTrue(); // call ids are per client, so per stream
    assertThat(a.admit(2)).isFalse();
    assertThat(a.admit(1)).as("a resend of a read that holds a slot").isTrue();
    assertThat(reads.inUse()).isEqualTo(2);

    a.answered(2); // refused, held nothing: frees nothing
    assertThat(reads.inUse()).isEqualTo(2);
    a.answered(1);
    assertThat(reads.inUse()).isEqualTo(1);
    a.answered(1);
    assertThat(reads.inUse()).as("answered twice, freed once").isEqualTo(1);
    assertThat(a.admit(3)).isTrue();
    assertThat(reads.inUse()).isEqualTo(2);
  }

  @Test
  void aStreamThatEndsGivesBackEverySlotItHeld() {
    ReadsInFlight reads = new ReadsInFlight(3);
    ReadsInFlight.Stream gone = reads.openStream();
    gone.admit(1);
    gone.admit(2);
    ReadsInFlight.Stream other = reads.openStream();
    other.admit(1);
    gone.close();
    assertThat(reads.inUse()).isEqualTo(1);
    gone.close();
    gone.answered(1);
    assertThat(reads.inUse()).isEqualTo(1);
  }
}
