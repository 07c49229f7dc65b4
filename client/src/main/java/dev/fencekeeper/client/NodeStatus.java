package dev.fencekeeper.client;

/**
 * What one node says about itself: its Raft role and term, how far it has applied the log, and the
 * leader it follows. A health check reads it to tell whether the cluster has a leader that answers.
 *
 * @param id the node's id, e.g. {@code n1}
 * @param address the node's Raft address, {@code host:port}
 * @param role {@code LEADER}, {@code FOLLOWER}, {@code CANDIDATE} or {@code LISTENER}
 * @param term the node's current Raft term
 * @param appliedIndex the last log index its state machine applied
 * @param commitIndex the last log index it knows to be committed
 * @param leaderId the leader it follows; empty when it knows of none
 * @param clusterId the id of the cluster the node belongs to, minted when the cluster first formed;
 *     empty while the node knows none yet
 */
public record NodeStatus(
    String id,
    String address,
    String role,
    long term,
    long appliedIndex,
    long commitIndex,
    String leaderId,
    String clusterId) {

  /** A node's status without its cluster id (as if it knew none yet). */
  public NodeStatus(
      String id,
      String address,
      String role,
      long term,
      long appliedIndex,
      long commitIndex,
      String leaderId) {
    this(id, address, role, term, appliedIndex, commitIndex, leaderId, "");
  }

  /** Whether this node is the cluster's leader. */
  public boolean isLeader() {
    return "LEADER".equals(role);
  }
}
