package dev.fencekeeper.config;

/**
 * How much a node holds at once before it answers OVERLOADED (docs/security.md).
 *
 * @param maxPendingWrites commands the leader holds between accepting and applying them; beyond
 *     that it answers OVERLOADED ({@code overload.pending-writes.max})
 * @param maxPendingReads reads (linearizable, stale and watches) a node holds between receiving and
 *     answering them; beyond that it answers OVERLOADED ({@code overload.pending-reads.max})
 */
public record Overload(int maxPendingWrites, int maxPendingReads) {
  /** {@code overload.pending-writes.max}'s default. */
  public static final int DEFAULT_MAX_PENDING_WRITES =
      Keys.OVERLOAD_PENDING_WRITES_MAX.defaultValue();

  /**
   * Generous: a read is answered from memory within a read-index round, so this only stops floods.
   */
  public static final int DEFAULT_MAX_PENDING_READS =
      Keys.OVERLOAD_PENDING_READS_MAX.defaultValue();

  public Overload {
    Keys.OVERLOAD_PENDING_WRITES_MAX.check(maxPendingWrites);
    Keys.OVERLOAD_PENDING_READS_MAX.check(maxPendingReads);
  }

  /** The default pending-write and pending-read bounds. */
  public static Overload defaults() {
    return new Overload(DEFAULT_MAX_PENDING_WRITES, DEFAULT_MAX_PENDING_READS);
  }

  public Overload withMaxPendingWrites(int max) {
    return new Overload(max, maxPendingReads);
  }

  public Overload withMaxPendingReads(int max) {
    return new Overload(maxPendingWrites, max);
  }
}
