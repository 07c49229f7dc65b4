package dev.fencekeeper.client;

/** How fresh a read must be. */
public enum ReadConsistency {
  /** Reflects every write acknowledged before the read started (Raft read index on the leader). */
  LINEARIZABLE,
  /**
   * Whatever one replica has applied; cheaper, possibly behind. Never use it to decide ownership.
   */
  STALE
}
