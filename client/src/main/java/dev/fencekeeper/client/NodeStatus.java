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
 */
public record NodeStatus(
    String id,
    String address,
    String role,
    long term,
    long appliedIndex,
    long commitIndex,
    String leaderId) {

  /** Whether this node is the cluster's leader. */
  public boolean isLeader() {
    return "LEADER".equals(role);
  }
}
