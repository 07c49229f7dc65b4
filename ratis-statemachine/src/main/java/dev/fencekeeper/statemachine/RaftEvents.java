package dev.fencekeeper.statemachine;

/**
 * Raft's events that a node's own watchers sleep until, rather than polling for them: every
 * replica, on Ratis's threads; each call must return at once.
 */
public interface RaftEvents {
  RaftEvents NONE = new RaftEvents() {};

  /**
   * The leader this node knows of changed: to this node, to another, or to none. Called after the
   * node's role changed, so a node that reads its role on this call reads the new one.
   */
  default void leaderChanged() {}

  /**
   * A configuration entry was applied, or a snapshot installed from the leader brought a newer
   * configuration: the members may have changed.
   */
  default void configurationChanged() {}
}
