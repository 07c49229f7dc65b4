package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A node holds at most its bound of reads, and each read's slot comes back when it is answered. */
class ReadsInFlightTest {
  @Test
  void readsBeyondTheBoundAreRefusedUntilOneIsAnswered() {
    ReadsInFlight reads = new ReadsInFlight(2);
    assertThat(reads.tryTake()).isTrue();
    assertThat(reads.tryTake()).isTrue();
    assertThat(reads.tryTake()).as("a third read beyond a bound of 2").isFalse();
    assertThat(reads.inUse()).isEqualTo(2);

    reads.release();
    assertThat(reads.inUse()).isEqualTo(1);
    assertThat(reads.tryTake()).isTrue();
    assertThat(reads.inUse()).isEqualTo(2);
  }
}
