package dev.fencekeeper.core;

/**
 * The group's one token sequence, and which starting state it continues from. Tokens follow the log
 * index, so they need no state of their own in a normal cluster; the max with the last issued token
 * keeps them strictly increasing even when a restored cluster's log starts over. Tokens are grouped
 * in epochs of 2^{@value FencingState#TOKEN_EPOCH_BITS}: a cluster restored from a backup starts
 * the epoch after the backup's.
 */
final class TokenSequence {
  private long lastIssued;
  private long lineage;

  /** The highest token issued, for any resource. */
  long lastIssued() {
    return lastIssued;
  }

  /** 0 for a cluster that began empty, else the fingerprint of its restore seed. */
  long lineage() {
    return lineage;
  }

  /** The next token, for a grant in the entry at {@code entryIndex}. */
  long issue(long entryIndex) {
    lastIssued = Math.max(lastIssued + 1, entryIndex);
    return lastIssued;
  }

  /** Raises the sequence so that every later token exceeds {@code floor}; never lowers it. */
  void raiseFloor(long floor) {
    lastIssued = Math.max(lastIssued, floor);
  }

  /** Continues from an image's sequence and lineage. */
  void restore(long lastIssued, long lineage) {
    this.lastIssued = lastIssued;
    this.lineage = lineage;
  }

  /** Starts the next epoch, as the first state of a cluster seeded with {@code seedLineage}. */
  void beginNewEpoch(long seedLineage) {
    lastIssued = FencingState.nextEpochFloor(lastIssued);
    lineage = seedLineage;
  }

  /**
   * True when {@code token} belongs to an earlier token epoch than this sequence's: it was issued
   * by a cluster this one was restored from, and its lease ended with the restore.
   */
  boolean issuedBeforeRestore(long token) {
    return lineage != 0
        && (token >>> FencingState.TOKEN_EPOCH_BITS)
            < (lastIssued >>> FencingState.TOKEN_EPOCH_BITS);
  }
}
