package dev.fencekeeper.core;

/**
 * This replica's state is not the one the log was written against: applying further would make it
 * diverge from its peers and, were it to lead, issue tokens below ones already issued. The only
 * safe answer is to stop this replica, so this is thrown out of {@link FencingState#apply} on
 * purpose (Ratis shuts a server down whose state machine throws from apply).
 */
public final class ReplicaDivergedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  private final long entryIndex;

  ReplicaDivergedException(long entryIndex, long logLineage, long replicaLineage) {
    super(
        "log entry "
            + entryIndex
            + " was written by a cluster of lineage "
            + Long.toHexString(logLineage)
            + " but this replica's state has lineage "
            + Long.toHexString(replicaLineage)
            + ": "
            + remedy(logLineage, replicaLineage));
    this.entryIndex = entryIndex;
  }

  private static String remedy(long logLineage, long replicaLineage) {
    if (replicaLineage == 0) {
      return "this member joined a cluster restored from a backup without being seeded from that"
          + " backup; wipe its storage, run `fencekeeper restore <that backup> --storage-dir"
          + " <dir>` and start it again";
    }
    if (logLineage == 0) {
      return "this member was seeded from a backup, but the cluster it joined did not start from"
          + " one; wipe its storage (including the seed) and start it again";
    }
    return "this member was seeded from a different backup than the cluster it joined";
  }

  public long entryIndex() {
    return entryIndex;
  }
}
