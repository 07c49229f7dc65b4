package dev.fencekeeper.tools.drill.history;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * Everything a drill recorded: client operations, the lease events the cluster reported, and the
 * final linearizable reads taken after the faults healed.
 *
 * @param ops every client operation, workload and final reads alike
 * @param events lease events in commit order
 * @param eventsComplete false when the watch lost its place (compaction) or never caught up: checks
 *     that need every event are then skipped, and the checker says so
 * @param finalReadIds ids of the reads taken at the end, after the workload stopped
 */
public record History(
    List<Op> ops,
    List<LeaseEventRecord> events,
    boolean eventsComplete,
    List<Integer> finalReadIds) {

  public History {
    ops = List.copyOf(ops);
    List<LeaseEventRecord> sorted = new ArrayList<>(events);
    sorted.sort(
        Comparator.comparingLong(LeaseEventRecord::index).thenComparingInt(LeaseEventRecord::seq));
    events = Collections.unmodifiableList(sorted);
    finalReadIds = List.copyOf(finalReadIds);
  }

  public Op op(int id) {
    for (Op op : ops) {
      if (op.id() == id) {
        return op;
      }
    }
    throw new IllegalArgumentException("no op #" + id);
  }

  public List<Op> finalReads() {
    return finalReadIds.stream().map(this::op).toList();
  }
}
