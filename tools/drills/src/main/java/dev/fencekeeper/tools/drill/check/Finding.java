package dev.fencekeeper.tools.drill.check;

import dev.fencekeeper.tools.drill.history.LeaseEventRecord;
import dev.fencekeeper.tools.drill.history.Op;
import java.util.List;

/**
 * One violation of an invariant, with the smallest set of operations and events that shows it.
 *
 * @param kind which invariant broke
 * @param summary one sentence a person can check against {@code ops} and {@code events}
 */
public record Finding(Kind kind, String summary, List<Op> ops, List<LeaseEventRecord> events) {

  public enum Kind {
    /**
     * A write was accepted with a token lower than one already issued for its resource before it
     * was sent.
     */
    STALE_WRITE_ACCEPTED,
    /** A write was committed after its lease had ended (released, expired or revoked). */
    WRITE_AFTER_LEASE_ENDED,
    /** A key's accepted token went down in commit order (version order). */
    TOKEN_DECREASED_ON_KEY,
    /** An acknowledged write is not in the final state and no later write replaced it. */
    LOST_WRITE,
    /** Issued tokens were not unique and strictly increasing per resource. */
    TOKEN_NOT_INCREASING,
    /** Two leases were live on one resource at one instant of state-machine time. */
    TWO_LIVE_LEASES,
    /** Reads of a key cannot be explained by any order of the writes consistent with real time. */
    NON_LINEARIZABLE_READ,
    /**
     * A wall-clock step on the leader moved a lease deadline: a holder renewing in time lost its
     * lease, or a lease left to run out outlived its TTL by more than the drill's bound.
     */
    LEASE_DEADLINE_MOVED_BY_CLOCK_STEP,
    /**
     * A node whose storage ran out of space did not stop with the storage-full exit code, started
     * while still full, or did not start and catch up once space was freed.
     */
    NODE_NOT_RECOVERED_FROM_FULL_DISK,
    /**
     * A holder renewing its lease through the client's session lost it across a leader kill, while
     * the rest of the cluster stayed available.
     */
    RENEWING_HOLDER_LOST_LEASE,
    /**
     * The checker could not decide (final state unreadable, search budget exhausted): not a pass.
     */
    INCONCLUSIVE
  }

  public Finding {
    ops = List.copyOf(ops);
    events = List.copyOf(events);
  }

  static Finding of(Kind kind, String summary, List<Op> ops) {
    return new Finding(kind, summary, ops, List.of());
  }
}
