package dev.fencekeeper.tools.drill;

import dev.fencekeeper.tools.drill.check.Verdict;
import dev.fencekeeper.tools.drill.history.History;
import dev.fencekeeper.tools.drill.history.LeaseEventRecord;
import dev.fencekeeper.tools.drill.history.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/** A finished drill: its history and verdict, and the figures computed from them. */
record DrillResult(
    String drill,
    DrillRunner.Settings settings,
    History history,
    Verdict verdict,
    List<DrillContext.Mark> marks,
    List<DrillContext.DeadHolder> deadHolders,
    List<DrillResult.Window> renewals,
    List<LeaderMonitor.Leadership> leaderships,
    List<String> staleWriterTimeline,
    long startNanos,
    Path dataDir) {

  /** Operations by type and outcome. */
  Map<Op.OpType, Map<Op.Outcome, Integer>> opsByOutcome() {
    Map<Op.OpType, Map<Op.Outcome, Integer>> counts = new EnumMap<>(Op.OpType.class);
    for (Op.OpType type : Op.OpType.values()) {
      Map<Op.Outcome, Integer> byOutcome = new EnumMap<>(Op.Outcome.class);
      for (Op.Outcome outcome : Op.Outcome.values()) {
        byOutcome.put(outcome, 0);
      }
      counts.put(type, byOutcome);
    }
    for (Op op : history.ops()) {
      counts.get(op.type()).merge(op.outcome(), 1, Integer::sum);
    }
    return counts;
  }

  /** A window from a fault (or a holder's death) to the first success after it; -1 if none came. */
  record Window(String what, long fromNanos, long millis) {}

  /** Each disruptive fault → the completion of the first write sent after it that was accepted. */
  List<Window> unavailability() {
    List<Window> windows = new ArrayList<>();
    for (DrillContext.Mark mark : marks) {
      if (!mark.disruptive()) {
        continue;
      }
      long first = Long.MAX_VALUE;
      for (Op op : history.ops()) {
        if (op.type() == Op.OpType.WRITE && op.ok() && op.invokeNanos() >= mark.nanos()) {
          first = Math.min(first, op.completeNanos());
        }
      }
      windows.add(
          new Window(
              mark.what(),
              mark.nanos(),
              first == Long.MAX_VALUE ? -1 : (first - mark.nanos()) / 1_000_000));
    }
    return windows;
  }

  /** Each dead holder → the first moment a newer lease on its resource is known to be granted. */
  List<Window> regrants() {
    List<Window> windows = new ArrayList<>();
    for (DrillContext.DeadHolder dead : deadHolders) {
      long first = Long.MAX_VALUE;
      for (Op op : history.ops()) {
        if (op.type() == Op.OpType.ACQUIRE
            && op.ok()
            && op.resource().equals(dead.resource())
            && op.result().token() > dead.token()
            && op.completeNanos() > dead.atNanos()) {
          first = Math.min(first, op.completeNanos());
        }
      }
      for (LeaseEventRecord e : history.events()) {
        if (e.type() == LeaseEventRecord.Type.ACQUIRED
            && e.resource().equals(dead.resource())
            && e.token() > dead.token()
            && e.observedNanos() > dead.atNanos()) {
          first = Math.min(first, e.observedNanos());
        }
      }
      windows.add(
          new Window(
              dead.resource() + " token " + dead.token(),
              dead.atNanos(),
              first == Long.MAX_VALUE ? -1 : (first - dead.atNanos()) / 1_000_000));
    }
    return windows;
  }

  /** Leader changes seen after the first leader: one per later term in which a leader was named. */
  int electionsSeen() {
    return Math.max(0, leaderships.size() - 1);
  }
}
