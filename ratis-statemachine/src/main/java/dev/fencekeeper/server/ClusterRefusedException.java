package dev.fencekeeper.server;

import java.io.IOException;

/**
 * A node did not start its Raft server because its storage does not fit the cluster its peers form:
 * it is empty although the cluster has seen this node hold the log, or it belongs to another
 * cluster ({@link StartCheck}). The message is the one line to show the operator.
 */
public final class ClusterRefusedException extends IOException {
  private static final long serialVersionUID = 1L;

  ClusterRefusedException(String reason) {
    super(reason);
  }
}
