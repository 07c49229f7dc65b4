package dev.fencekeeper.tools.drill;

import dev.fencekeeper.config.PeerAddress;
import java.util.List;

/**
 * One fault scenario. The runner starts the nodes {@link #members} describes, runs the workload,
 * calls {@link #inject} until the duration is up, then {@link #heal}, and checks the history.
 */
interface Drill {
  String name();

  /** One line for usage and docs. */
  String summary();

  /** Defines (does not start) the nodes; the default is three nodes on loopback, no skew. */
  default List<PeerAddress> members(DrillCluster cluster, List<PeerAddress> loopbackPeers) {
    List<PeerAddress> three = loopbackPeers.subList(0, 3);
    for (PeerAddress peer : three) {
      cluster.define(peer, three, null, 0);
    }
    return three;
  }

  /** Whether it can run against a cluster it did not start ({@code --peers}). */
  default boolean worksWithExternalCluster() {
    return false;
  }

  void inject(DrillContext ctx) throws Exception;

  /** Ends every fault: paused nodes resumed, stopped ones started again. */
  default void heal(DrillContext ctx) {
    for (DrillCluster.Node node : ctx.cluster.nodes()) {
      if (ctx.cluster.pid(node.id()).isEmpty()) {
        ctx.cluster.start(node.id());
      } else {
        ctx.cluster.resume(node.id());
      }
    }
  }

  /** Releases what {@link #members} set up outside the processes (network namespaces). */
  default void tearDown() {}
}
