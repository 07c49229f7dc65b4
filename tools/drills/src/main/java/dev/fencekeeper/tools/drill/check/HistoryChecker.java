package dev.fencekeeper.tools.drill.check;

import dev.fencekeeper.tools.drill.check.Finding.Kind;
import dev.fencekeeper.tools.drill.history.History;
import dev.fencekeeper.tools.drill.history.LeaseEventRecord;
import dev.fencekeeper.tools.drill.history.Op;
import dev.fencekeeper.tools.drill.history.Op.OpType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Checks a drill's history against fencekeeper's guarantees. Every check is conservative: an
 * operation without an answer counts as possibly applied, never as certainly not, and an order is
 * only assumed where the history proves it (real time on one monotonic clock, versions of a key,
 * the log order of events).
 */
public final class HistoryChecker {
  private final long searchBudget;

  public HistoryChecker() {
    this(RegisterLinearizability.DEFAULT_BUDGET);
  }

  HistoryChecker(long searchBudget) {
    this.searchBudget = searchBudget;
  }

  public Verdict check(History history) {
    List<Finding> findings = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    staleWrites(history, findings);
    if (history.eventsComplete()) {
      writesAfterLeaseEnded(history, findings);
      issuedTokensFromLog(history, findings);
      oneLiveLeaseFromLog(history, findings);
    } else {
      notes.add(
          "the lease-event stream is incomplete: the log-order checks (lease ended before a write,"
              + " tokens in log order, one live lease) were skipped; the client-side checks still"
              + " ran");
    }
    issuedTokensFromClients(history, findings);
    renewalsAfterNewerGrant(history, findings);
    tokenOrderPerKey(history, findings);
    lostWrites(history, findings, notes);
    linearizableReads(history, findings, notes);
    return new Verdict(findings, notes);
  }

  // ---------------------------------------------------------------------------------------------
  // Stale writes.

  private record Issued(long token, long knownAtNanos, Op op, LeaseEventRecord event) {}

  /** Tokens of each resource and the earliest instant the history proves each was issued. */
  private static Map<String, List<Issued>> issued(History history) {
    Map<String, List<Issued>> byResource = new HashMap<>();
    for (Op op : history.ops()) {
      if (op.type() == OpType.ACQUIRE && op.ok()) {
        byResource
            .computeIfAbsent(op.resource(), r -> new ArrayList<>())
            .add(new Issued(op.result().token(), op.completeNanos(), op, null));
      }
    }
    for (LeaseEventRecord e : history.events()) {
      if (e.type() == LeaseEventRecord.Type.ACQUIRED) {
        byResource
            .computeIfAbsent(e.resource(), r -> new ArrayList<>())
            .add(new Issued(e.token(), e.observedNanos(), null, e));
      }
    }
    return byResource;
  }

  private static void staleWrites(History history, List<Finding> findings) {
    Map<String, List<Issued>> issued = issued(history);
    for (Op w : history.ops()) {
      if (w.type() != OpType.WRITE || !w.ok()) {
        continue;
      }
      Issued newer = null;
      for (Issued i : issued.getOrDefault(w.resource(), List.of())) {
        if (i.token() > w.token()
            && i.knownAtNanos() < w.invokeNanos()
            && (newer == null || i.knownAtNanos() < newer.knownAtNanos())) {
          newer = i;
        }
      }
      if (newer != null) {
        String summary =
            "write with token "
                + w.token()
                + " on "
                + w.resource()
                + " was accepted although token "
                + newer.token()
                + " had been issued for it before the write was sent";
        findings.add(
            new Finding(
                Kind.STALE_WRITE_ACCEPTED,
                summary,
                newer.op() == null ? List.of(w) : List.of(newer.op(), w),
                newer.event() == null ? List.of() : List.of(newer.event())));
      }
    }
  }

  /**
   * When a write commits is its state-machine write time; a deduplicated retry reports the first
   * one.
   */
  private static long commitTimeMs(Op write) {
    return write.result().smTimeMs();
  }

  private static void writesAfterLeaseEnded(History history, List<Finding> findings) {
    Map<String, LeaseEventRecord> endOf = new HashMap<>();
    for (LeaseEventRecord e : history.events()) {
      if (e.endsLease()) {
        endOf.putIfAbsent(e.resource() + "\u0000" + e.token(), e);
      }
    }
    for (Op w : history.ops()) {
      if (w.type() != OpType.WRITE || !w.ok()) {
        continue;
      }
      LeaseEventRecord end = endOf.get(w.resource() + "\u0000" + w.token());
      if (end != null && commitTimeMs(w) > end.atMs()) {
        findings.add(
            new Finding(
                Kind.WRITE_AFTER_LEASE_ENDED,
                "write with token "
                    + w.token()
                    + " on "
                    + w.resource()
                    + " committed at sm-time "
                    + commitTimeMs(w)
                    + ", after its lease ended ("
                    + end.type()
                    + " at "
                    + end.atMs()
                    + ")",
                List.of(w),
                List.of(end)));
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Tokens.

  private static void issuedTokensFromLog(History history, List<Finding> findings) {
    Map<String, LeaseEventRecord> lastByResource = new HashMap<>();
    Map<Long, LeaseEventRecord> byToken = new HashMap<>();
    for (LeaseEventRecord e : history.events()) {
      if (e.type() != LeaseEventRecord.Type.ACQUIRED) {
        continue;
      }
      LeaseEventRecord before = lastByResource.put(e.resource(), e);
      if (before != null && e.token() <= before.token()) {
        findings.add(
            new Finding(
                Kind.TOKEN_NOT_INCREASING,
                "token "
                    + e.token()
                    + " was issued for "
                    + e.resource()
                    + " after token "
                    + before.token()
                    + " in log order",
                List.of(),
                List.of(before, e)));
      }
      LeaseEventRecord same = byToken.put(e.token(), e);
      if (same != null && before != same) {
        findings.add(
            new Finding(
                Kind.TOKEN_NOT_INCREASING,
                "token " + e.token() + " was issued twice",
                List.of(),
                List.of(same, e)));
      }
    }
    Map<String, List<Long>> logged = new HashMap<>();
    for (LeaseEventRecord e : history.events()) {
      if (e.type() == LeaseEventRecord.Type.ACQUIRED) {
        logged.computeIfAbsent(e.resource(), r -> new ArrayList<>()).add(e.token());
      }
    }
    for (Op a : history.ops()) {
      if (a.type() == OpType.ACQUIRE
          && a.ok()
          && !logged.getOrDefault(a.resource(), List.of()).contains(a.result().token())) {
        findings.add(
            Finding.of(
                Kind.TOKEN_NOT_INCREASING,
                "token "
                    + a.result().token()
                    + " was granted to a client but never appears in the log's events",
                List.of(a)));
      }
    }
  }

  private static void issuedTokensFromClients(History history, List<Finding> findings) {
    Map<Long, Op> grantOf = new HashMap<>();
    Map<String, List<Op>> grantsByResource = new HashMap<>();
    for (Op a : history.ops()) {
      if (a.type() != OpType.ACQUIRE || !a.ok()) {
        continue;
      }
      Op same = grantOf.putIfAbsent(a.result().token(), a);
      if (same != null) {
        findings.add(
            Finding.of(
                Kind.TOKEN_NOT_INCREASING,
                "two acquisitions were both granted token " + a.result().token(),
                List.of(same, a)));
      }
      grantsByResource.computeIfAbsent(a.resource(), r -> new ArrayList<>()).add(a);
    }
    for (List<Op> grants : grantsByResource.values()) {
      for (Op earlier : grants) {
        for (Op later : grants) {
          if (earlier.completeNanos() < later.invokeNanos()
              && earlier.result().token() >= later.result().token()) {
            findings.add(
                Finding.of(
                    Kind.TOKEN_NOT_INCREASING,
                    "token "
                        + later.result().token()
                        + " was granted for "
                        + later.resource()
                        + " after token "
                        + earlier.result().token()
                        + " had been granted (in real time)",
                    List.of(earlier, later)));
          }
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // One live lease per resource.

  private static void oneLiveLeaseFromLog(History history, List<Finding> findings) {
    Map<String, LeaseEventRecord> live = new HashMap<>();
    for (LeaseEventRecord e : history.events()) {
      switch (e.type()) {
        case ACQUIRED -> {
          LeaseEventRecord holder = live.get(e.resource());
          if (holder != null && holder.token() != e.token()) {
            findings.add(
                new Finding(
                    Kind.TWO_LIVE_LEASES,
                    "lease "
                        + e.token()
                        + " on "
                        + e.resource()
                        + " was granted at sm-time "
                        + e.atMs()
                        + " while lease "
                        + holder.token()
                        + " had not ended",
                    List.of(),
                    List.of(holder, e)));
          }
          live.put(e.resource(), e);
        }
        case RELEASED, EXPIRED, REVOKED -> {
          LeaseEventRecord holder = live.get(e.resource());
          if (holder != null && holder.token() == e.token()) {
            live.remove(e.resource());
          }
        }
        default -> {}
      }
    }
  }

  /** A renewal answered OK after a newer lease was granted means both were live at that instant. */
  private static void renewalsAfterNewerGrant(History history, List<Finding> findings) {
    List<Op> grants =
        history.ops().stream().filter(o -> o.type() == OpType.ACQUIRE && o.ok()).toList();
    for (Op renew : history.ops()) {
      if (renew.type() != OpType.RENEW || !renew.ok()) {
        continue;
      }
      for (Op grant : grants) {
        if (grant.resource().equals(renew.resource())
            && grant.result().token() > renew.token()
            && renew.result().smTimeMs() > grant.result().smTimeMs()) {
          findings.add(
              Finding.of(
                  Kind.TWO_LIVE_LEASES,
                  "lease "
                      + renew.token()
                      + " on "
                      + renew.resource()
                      + " was renewed at sm-time "
                      + renew.result().smTimeMs()
                      + ", after lease "
                      + grant.result().token()
                      + " was granted at "
                      + grant.result().smTimeMs(),
                  List.of(grant, renew)));
          break;
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Keys.

  private static Map<String, List<Op>> opsByKey(History history) {
    Map<String, List<Op>> byKey = new LinkedHashMap<>();
    for (Op op : history.ops()) {
      if (op.key() != null) {
        byKey.computeIfAbsent(op.resource() + "/" + op.key(), k -> new ArrayList<>()).add(op);
      }
    }
    return byKey;
  }

  private static void tokenOrderPerKey(History history, List<Finding> findings) {
    for (Map.Entry<String, List<Op>> key : opsByKey(history).entrySet()) {
      // Version order is commit order: a key's version counts its accepted writes.
      TreeMap<Long, Op> byVersion = new TreeMap<>();
      for (Op op : key.getValue()) {
        if (!op.ok()
            || op.result().version() == 0
            || (op.type() != OpType.WRITE && op.type() != OpType.READ)) {
          continue;
        }
        Op seen = byVersion.putIfAbsent(op.result().version(), op);
        if (seen != null && seen.result().acceptedToken() != op.result().acceptedToken()) {
          findings.add(
              Finding.of(
                  Kind.TOKEN_DECREASED_ON_KEY,
                  key.getKey()
                      + " reported version "
                      + op.result().version()
                      + " with two different tokens",
                  List.of(seen, op)));
        }
      }
      Op previous = null;
      for (Op op : byVersion.values()) {
        if (previous != null && op.result().acceptedToken() < previous.result().acceptedToken()) {
          findings.add(
              Finding.of(
                  Kind.TOKEN_DECREASED_ON_KEY,
                  key.getKey()
                      + ": accepted token went from "
                      + previous.result().acceptedToken()
                      + " (version "
                      + previous.result().version()
                      + ") down to "
                      + op.result().acceptedToken()
                      + " (version "
                      + op.result().version()
                      + ")",
                  List.of(previous, op)));
        }
        previous = op;
      }
    }
  }

  private static void lostWrites(History history, List<Finding> findings, List<String> notes) {
    Map<String, Op> finalRead = new HashMap<>();
    for (Op read : history.finalReads()) {
      if (read.ok()) {
        finalRead.put(read.resource() + "/" + read.key(), read);
      }
    }
    Map<String, Map<Long, Op>> ackedByVersion = new HashMap<>();
    for (Map.Entry<String, List<Op>> key : opsByKey(history).entrySet()) {
      List<Op> acked =
          key.getValue().stream().filter(o -> o.type() == OpType.WRITE && o.ok()).toList();
      if (acked.isEmpty()) {
        continue;
      }
      Op last = finalRead.get(key.getKey());
      if (last == null) {
        findings.add(
            Finding.of(
                Kind.INCONCLUSIVE,
                key.getKey()
                    + " has acknowledged writes but no final read succeeded: durability not"
                    + " checked",
                List.of()));
        continue;
      }
      for (Op w : acked) {
        Op sameVersion =
            ackedByVersion
                .computeIfAbsent(key.getKey(), k -> new HashMap<>())
                .putIfAbsent(w.result().version(), w);
        if (sameVersion != null && !Objects.equals(sameVersion.value(), w.value())) {
          findings.add(
              Finding.of(
                  Kind.LOST_WRITE,
                  "two different acknowledged writes of "
                      + key.getKey()
                      + " both became version "
                      + w.result().version()
                      + ": one of them was lost",
                  List.of(sameVersion, w)));
        }
        long finalVersion = last.result().readValue() == null ? 0 : last.result().version();
        boolean lost =
            w.result().version() > finalVersion
                || (w.result().version() == finalVersion
                    && !Objects.equals(w.value(), last.result().readValue()));
        if (lost) {
          findings.add(
              Finding.of(
                  Kind.LOST_WRITE,
                  "acknowledged write of "
                      + key.getKey()
                      + " (version "
                      + w.result().version()
                      + ") is not in the final state, and no later write replaced it",
                  List.of(w, last)));
        }
      }
    }
    notes.add(
        "final state: " + finalRead.size() + " key(s) read linearizably after the faults healed");
  }

  private void linearizableReads(History history, List<Finding> findings, List<String> notes) {
    int keys = 0;
    int opsChecked = 0;
    for (Map.Entry<String, List<Op>> key : opsByKey(history).entrySet()) {
      List<Op> relevant = RegisterLinearizability.relevant(key.getValue());
      keys++;
      opsChecked += relevant.size();
      RegisterLinearizability.Answer answer = RegisterLinearizability.check(relevant, searchBudget);
      if (answer == RegisterLinearizability.Answer.NOT_LINEARIZABLE) {
        List<Op> witness = RegisterLinearizability.witness(relevant, searchBudget / 10);
        witness.sort(Comparator.comparingLong(Op::invokeNanos));
        findings.add(
            Finding.of(
                Kind.NON_LINEARIZABLE_READ,
                "reads and writes of "
                    + key.getKey()
                    + " fit no order consistent with real time (register model);"
                    + " the "
                    + witness.size()
                    + " operation(s) below already show it",
                witness));
      } else if (answer == RegisterLinearizability.Answer.UNDECIDED) {
        findings.add(
            Finding.of(
                Kind.INCONCLUSIVE,
                "linearizability of "
                    + key.getKey()
                    + " undecided after "
                    + searchBudget
                    + " search states",
                List.of()));
      }
    }
    notes.add(
        "linearizability: "
            + keys
            + " key(s), "
            + opsChecked
            + " read/write operation(s) searched");
  }
}
