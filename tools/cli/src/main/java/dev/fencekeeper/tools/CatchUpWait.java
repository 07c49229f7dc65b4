package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingAdmin.Membership;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.NodeInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * After {@code members add}: waits until the new member serves — it answers on its client port and
 * has applied every entry the cluster had committed when it was added — and otherwise says why not.
 * A member that stops answering, or stops applying, is reported long before the whole wait is up.
 */
final class CatchUpWait {
  /** The longest wait for a member that keeps making progress (a large snapshot to install). */
  static final Duration CATCH_UP = Duration.ofSeconds(120);

  /** A member that answers nothing for this long is reported not reachable. */
  static final Duration SILENCE = Duration.ofSeconds(5);

  /** A member whose applied index does not move for this long is reported stalled. */
  static final Duration STALL = Duration.ofSeconds(20);

  private static final Duration POLL = Duration.ofMillis(200);
  private static final Duration ASK = Duration.ofSeconds(1);

  private CatchUpWait() {}

  /**
   * Waits for member {@code id} of {@code membership} (which already includes it) to serve, asking
   * it at the client address the cluster reports for it; empty when it does, else why it does not,
   * in words.
   */
  static Optional<String> awaitServing(FencingAdmin admin, Membership membership, String id)
      throws InterruptedException {
    long target = commitIndex(admin, membership, id);
    long start = System.nanoTime();
    long lastHeard = start;
    long lastProgress = start;
    long applied = Long.MIN_VALUE;
    String why = "it has not answered yet";
    while (true) {
      long now = System.nanoTime();
      try {
        NodeInfo info = Wire.nodeInfo(admin, id, ASK);
        lastHeard = now;
        if (info.getLastAppliedIndex() > applied) {
          applied = info.getLastAppliedIndex();
          lastProgress = now;
        }
        if (!info.getRole().isEmpty() && info.getLastAppliedIndex() >= target) {
          return Optional.empty();
        }
        why =
            "it has applied up to index "
                + info.getLastAppliedIndex()
                + " of the "
                + target
                + " the cluster had committed when it was added"
                + (info.getRole().isEmpty() ? ", and has no group yet" : "");
      } catch (RuntimeException e) {
        why = "not reachable: " + ClusterProbe.reason(e, ASK);
      }
      if (now - lastHeard >= SILENCE.toNanos()) {
        return Optional.of(why + " (for " + seconds(now - lastHeard) + ")");
      }
      if (now - lastProgress >= STALL.toNanos()) {
        return Optional.of(why + "; no progress for " + seconds(now - lastProgress));
      }
      if (now - start >= CATCH_UP.toNanos()) {
        return Optional.of(why + " after " + seconds(now - start));
      }
      Thread.sleep(POLL.toMillis());
    }
  }

  /**
   * The cluster's commit index now: the leader's, or, when it does not answer, the highest any
   * other member reports.
   */
  private static long commitIndex(FencingAdmin admin, Membership membership, String newMember) {
    String leaderId = membership.leaderId();
    List<String> ask = new ArrayList<>();
    if (!leaderId.isEmpty()) {
      ask.add(leaderId);
    }
    membership.members().stream()
        .map(PeerAddress::id)
        .filter(p -> !p.equals(newMember) && !p.equals(leaderId))
        .forEach(ask::add);
    long highest = 0;
    for (String peer : ask) {
      try {
        long commit = Wire.nodeInfo(admin, peer, ASK).getCommitIndex();
        if (peer.equals(leaderId)) {
          return commit;
        }
        highest = Math.max(highest, commit);
      } catch (RuntimeException e) {
        // another member may answer
      }
    }
    return highest;
  }

  private static String seconds(long nanos) {
    return String.format(java.util.Locale.ROOT, "%.1fs", nanos / 1e9);
  }
}
