package dev.fencekeeper.tools.drill;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.config.Durations;
import dev.fencekeeper.tools.drill.check.Finding;
import dev.fencekeeper.tools.drill.history.LeaseEventRecord;
import dev.fencekeeper.tools.drill.history.Op;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** The drill's output: a timeline and figures a person reads, or one JSON object for scripts. */
final class DrillReport {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private DrillReport() {}

  static String replayCommand(DrillResult r) {
    return "./fencekeeper drill "
        + r.drill()
        + " --duration "
        + Durations.format(r.settings().duration())
        + " --seed "
        + r.settings().seed()
        + (r.settings().workers() != DrillCommand.DEFAULT_WORKERS
            ? " --workers " + r.settings().workers()
            : "")
        + (r.settings().external() != null ? " --endpoints " + endpoints(r) : "");
  }

  /** The running cluster's client endpoints, as {@code --endpoints} takes them. */
  private static String endpoints(DrillResult r) {
    return r.settings().external().clientAddresses().stream()
        .map(dev.fencekeeper.config.PeerAddress::address)
        .collect(java.util.stream.Collectors.joining(","));
  }

  private static String at(DrillResult r, long nanos) {
    return nanos == Long.MAX_VALUE
        ? "      ?"
        : String.format("%7.3fs", (nanos - r.startNanos()) / 1e9);
  }

  private static String describe(DrillResult r, Op op) {
    return at(r, op.invokeNanos()) + " .. " + at(r, op.completeNanos()) + "  " + op.describe();
  }

  static void printText(DrillResult r, PrintStream out) {
    out.println(
        "fencekeeper drill "
            + r.drill()
            + ": seed "
            + r.settings().seed()
            + ", "
            + Durations.format(r.settings().duration())
            + ", "
            + r.settings().workers()
            + " workers"
            + (r.settings().external() != null ? ", cluster " + endpoints(r) : "")
            + "; files in "
            + r.dataDir());
    out.println();
    out.println("timeline (seconds since the cluster was ready)");
    for (DrillContext.Mark m : r.marks()) {
      out.println("  " + at(r, m.nanos()) + "  " + (m.disruptive() ? "FAULT " : "") + m.what());
    }
    if (!r.staleWriterTimeline().isEmpty()) {
      out.println();
      out.println("stale writer, as in the README (T1..T6 of each round, tokens as issued)");
      for (String line : r.staleWriterTimeline()) {
        out.println("  " + line);
      }
    }
    out.println();
    out.println("operations      ok  rejected  unknown");
    for (Map.Entry<Op.OpType, Map<Op.Outcome, Integer>> e : r.opsByOutcome().entrySet()) {
      Map<Op.Outcome, Integer> c = e.getValue();
      out.printf(
          "  %-8s %7d %9d %8d%n",
          e.getKey().name().toLowerCase(),
          c.get(Op.Outcome.OK),
          c.get(Op.Outcome.FAIL),
          c.get(Op.Outcome.UNKNOWN));
    }
    out.println(
        "lease events: "
            + r.history().events().size()
            + (r.history().eventsComplete()
                ? " (complete to the end of the log)"
                : " (INCOMPLETE)"));
    out.println("unavailability, fault -> first accepted write: " + windows(r.unavailability()));
    out.println("dead holder -> re-grant of its resource: " + windows(r.regrants()));
    if (!r.renewals().isEmpty()) {
      out.println(
          "leader kill -> first renewal of a "
              + RenewingHolders.TTL.toSeconds()
              + " s lease by the new leader: "
              + windows(r.renewals()));
    }
    out.println(
        "elections seen: "
            + r.electionsSeen()
            + " (leader by term: "
            + r.leaderships().stream()
                .map(l -> l.term() + ":" + l.leader())
                .collect(Collectors.joining(" "))
            + ")");
    for (String note : r.verdict().notes()) {
      out.println("checker: " + note);
    }
    out.println();
    if (r.verdict().passed()) {
      out.println(
          "verdict: PASS, no violation in "
              + r.history().ops().size()
              + " operations and "
              + r.history().events().size()
              + " lease events");
    } else {
      out.println("verdict: FAIL, " + r.verdict().findings().size() + " violation(s)");
      for (Finding f : r.verdict().findings()) {
        out.println("  [" + f.kind() + "] " + f.summary());
        for (Op op : f.ops()) {
          out.println("      " + describe(r, op));
        }
        for (LeaseEventRecord e : f.events()) {
          out.println("      " + at(r, e.observedNanos()) + " (seen)  " + e.describe());
        }
      }
      out.println("replay: " + replayCommand(r));
    }
    out.flush();
  }

  private static String windows(List<DrillResult.Window> windows) {
    if (windows.isEmpty()) {
      return "none";
    }
    long max = windows.stream().mapToLong(DrillResult.Window::millis).max().orElse(0);
    String each =
        windows.stream()
            .map(
                w ->
                    w.millis() < 0
                        ? "none before the end"
                        : String.format("%.2fs", w.millis() / 1e3))
            .collect(Collectors.joining(", "));
    boolean never = windows.stream().anyMatch(w -> w.millis() < 0);
    return windows.size()
        + " ("
        + each
        + ")"
        + (never ? "" : String.format(", max %.2fs", max / 1e3));
  }

  static void printJson(DrillResult r, PrintStream out) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("drill", r.drill());
    root.put("seed", r.settings().seed());
    root.put("duration_ms", r.settings().duration().toMillis());
    root.put("workers", r.settings().workers());
    root.put("verdict", r.verdict().passed() ? "PASS" : "FAIL");
    root.put("data_dir", r.dataDir().toString());
    ObjectNode ops = root.putObject("ops");
    for (Map.Entry<Op.OpType, Map<Op.Outcome, Integer>> e : r.opsByOutcome().entrySet()) {
      ObjectNode o = ops.putObject(e.getKey().name().toLowerCase());
      o.put("ok", e.getValue().get(Op.Outcome.OK));
      o.put("rejected", e.getValue().get(Op.Outcome.FAIL));
      o.put("unknown", e.getValue().get(Op.Outcome.UNKNOWN));
    }
    root.put("lease_events", r.history().events().size());
    root.put("events_complete", r.history().eventsComplete());
    windowsJson(root.putArray("unavailability_ms"), r.unavailability());
    windowsJson(root.putArray("regrant_ms"), r.regrants());
    windowsJson(root.putArray("renewal_after_kill_ms"), r.renewals());
    root.put("elections_seen", r.electionsSeen());
    ArrayNode timeline = root.putArray("timeline");
    for (DrillContext.Mark m : r.marks()) {
      timeline
          .addObject()
          .put("at_ms", (m.nanos() - r.startNanos()) / 1_000_000)
          .put("what", m.what())
          .put("fault", m.disruptive());
    }
    ArrayNode stale = root.putArray("stale_writer_timeline");
    r.staleWriterTimeline().forEach(stale::add);
    ArrayNode findings = root.putArray("violations");
    for (Finding f : r.verdict().findings()) {
      ObjectNode fj = findings.addObject();
      fj.put("kind", f.kind().name());
      fj.put("summary", f.summary());
      ArrayNode fo = fj.putArray("ops");
      f.ops().forEach(op -> fo.add(describe(r, op)));
      ArrayNode fe = fj.putArray("events");
      f.events().forEach(e -> fe.add(e.describe()));
    }
    ArrayNode notes = root.putArray("notes");
    r.verdict().notes().forEach(notes::add);
    root.put("replay", replayCommand(r));
    try {
      out.println(MAPPER.writeValueAsString(root));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    out.flush();
  }

  private static void windowsJson(ArrayNode array, List<DrillResult.Window> windows) {
    for (DrillResult.Window w : windows) {
      array.addObject().put("what", w.what()).put("ms", w.millis());
    }
  }
}
