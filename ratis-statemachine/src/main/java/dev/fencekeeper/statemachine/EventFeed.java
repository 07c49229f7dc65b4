package dev.fencekeeper.statemachine;

import dev.fencekeeper.proto.LeaseEvent;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The lease events a replica applies, in commit order, numbered {@code (index, seq)} alike on every
 * replica: what a node's client port streams to watchers, sessions and waiting acquires. Keeps the
 * most recent ones (see {@code EventLog}); older positions are compacted.
 */
public interface EventFeed {

  /**
   * Told of every applied entry, on the apply thread, in log order, under the feed's lock: it must
   * only hand the events on, never block or call back into the feed's replay.
   */
  interface Listener {
    Listener NONE = new Listener() {};

    /**
     * The entry at {@code index} was applied; {@code events} are its lease events (often none).
     * Every answer to that entry is sent after this returns.
     */
    default void onApplied(long index, List<LeaseEvent> events) {}

    /**
     * This replica started over from a snapshot at {@code index} (installed from the leader):
     * events before it are gone, so a stream that followed them has a gap.
     */
    default void onReset(long index) {}
  }

  /** Sets the one listener (null: none). */
  void setListener(Listener listener);

  /**
   * Hands {@code underLock} the kept events after {@code (afterIndex, afterSeq)} that pass {@code
   * filter}, in commit order, before any further entry is applied: a stream that queues them and
   * subscribes there misses nothing and sees nothing twice.
   */
  void replay(
      long afterIndex, int afterSeq, Predicate<LeaseEvent> filter, Consumer<Replay> underLock);

  /** The index of the last entry this replica applied. */
  long appliedIndex();

  /**
   * What {@link #replay} found: {@code compacted} when events after the position are no longer kept
   * (everything up to {@code horizonIndex} may be missing), else the {@code events}; {@code
   * appliedIndex} is the replica's applied index at that moment.
   */
  record Replay(boolean compacted, long horizonIndex, long appliedIndex, List<LeaseEvent> events) {}
}
