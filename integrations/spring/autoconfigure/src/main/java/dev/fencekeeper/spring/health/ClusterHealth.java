package dev.fencekeeper.spring.health;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one health check found: a leader that answered, nodes that answered without one, or no node
 * at all. Both health indicators (Spring Boot 3 and 4) report it the same way.
 *
 * @param state which of the three it was
 * @param leader the id of the node that answered as leader; null unless {@code state} is {@link
 *     State#LEADER}
 * @param leaderAddress that node's address; null unless it answered
 * @param term that node's Raft term; 0 unless it answered
 * @param nodes what each node said, or why it said nothing, in the cluster's order
 * @param reason one sentence for a DOWN state; null when UP
 */
public record ClusterHealth(
    State state,
    String leader,
    String leaderAddress,
    long term,
    Map<String, String> nodes,
    String reason) {

  /** The three answers a check can give; only {@link #LEADER} is UP. */
  public enum State {
    /** A node answered that it leads the cluster: leases are granted and writes accepted. */
    LEADER,
    /**
     * At least one node answered, none leads: an election is under way, or too few nodes run for a
     * quorum. Nothing is granted until a leader is elected.
     */
    NO_LEADER,
    /** No node answered within the timeout: the cluster is down or unreachable from here. */
    UNREACHABLE
  }

  public ClusterHealth {
    nodes = Map.copyOf(new LinkedHashMap<>(nodes));
  }

  /** Whether the cluster can serve this application now. */
  public boolean isUp() {
    return state == State.LEADER;
  }

  /** The health endpoint's details: {@code state}, then the leader or the reason, then nodes. */
  public Map<String, Object> details() {
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("state", state.name());
    if (state == State.LEADER) {
      details.put("leader", leader);
      details.put("address", leaderAddress);
      details.put("term", term);
    } else {
      details.put("reason", reason);
    }
    details.put("nodes", nodes);
    return details;
  }
}
