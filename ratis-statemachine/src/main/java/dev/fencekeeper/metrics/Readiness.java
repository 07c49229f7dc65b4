package dev.fencekeeper.metrics;

import java.util.OptionalLong;

/**
 * Whether a node that knows a leader has caught up with it: its applied index is within {@code
 * maxApplyLag} entries of the leader's commit index. A node's own commit index is no measure: a
 * node that restarted behind, or on wiped storage, holds only the entries the leader has sent it so
 * far and has applied all of them long before it has the cluster's state.
 */
record Readiness(int maxApplyLag) {

  Readiness {
    if (maxApplyLag < 0) {
      throw new IllegalArgumentException("maxApplyLag must not be negative: " + maxApplyLag);
    }
  }

  /**
   * Null when caught up, else why not, in words that follow "not ready: ".
   *
   * @param leaderCommit the leader's commit index as this node last heard it; empty when the leader
   *     has not yet told this node (a node that has just started, or whose log does not match the
   *     leader's yet)
   * @param applied this node's last applied index, -1 when it has applied nothing
   */
  String behind(String leader, OptionalLong leaderCommit, long applied) {
    if (applied < 0) {
      return "applied nothing yet (empty or wiped storage); catching up from leader " + leader;
    }
    if (leaderCommit.isEmpty()) {
      return "applied index "
          + applied
          + ", leader "
          + leader
          + " has not told this node its commit index yet";
    }
    long lag = leaderCommit.getAsLong() - applied;
    if (lag > maxApplyLag) {
      return "applied index "
          + applied
          + " is "
          + lag
          + " entries behind leader "
          + leader
          + "'s commit index "
          + leaderCommit.getAsLong()
          + " (health.max-apply-lag "
          + maxApplyLag
          + ")";
    }
    return null;
  }
}
