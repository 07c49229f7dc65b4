package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How often the storage guard looks follows how close the disk is to its reserve. */
class StorageGuardTest {
  // Guarantee: at the fill rate the guard assumes, the storage cannot pass from where it was at a
  // look into the reserve before the next look, except where the shortest interval applies (within
  // one reserve of the limit, as a fixed look at that interval always was); with plenty free it
  // looks once a second.
  @Test
  void theIntervalNeverOutrunsTheHeadroom() {
    long perMs = StorageGuard.FILL_BYTES_PER_SECOND / 1_000;
    for (long headroom = 0; headroom < 64L << 30; headroom = headroom * 2 + (1 << 20)) {
      long interval = StorageGuard.intervalMs(headroom);
      assertThat(interval).isBetween(StorageGuard.MIN_INTERVAL_MS, StorageGuard.MAX_INTERVAL_MS);
      if (interval > StorageGuard.MIN_INTERVAL_MS) {
        assertThat(interval * perMs)
            .as("filled at %d bytes free", headroom)
            .isLessThanOrEqualTo(headroom);
      }
    }
    assertThat(StorageGuard.intervalMs(0)).isEqualTo(StorageGuard.MIN_INTERVAL_MS);
    assertThat(StorageGuard.intervalMs(-1)).isEqualTo(StorageGuard.MIN_INTERVAL_MS);
    assertThat(StorageGuard.intervalMs(10L << 30)).isEqualTo(StorageGuard.MAX_INTERVAL_MS);
  }
}
