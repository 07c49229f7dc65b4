package dev.fencekeeper.metrics;

import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.LeaseEvent;
import dev.fencekeeper.core.Outcome;
import java.util.List;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * What the Ratis adapter tells the metrics about the requests it handles. Every method is
 * observation only: it never changes the state, the outcome or the reply, and it never throws into
 * Ratis. The default methods do nothing, so {@link #NONE} is a state machine without metrics.
 */
public interface StateMachineMetrics {
  StateMachineMetrics NONE = new StateMachineMetrics() {};

  /**
   * A TLS listener of this node refused a handshake from {@code remote} (null if unknown): the
   * connection never reached the service.
   */
  default void tlsHandshakeRefused(
      TlsListener listener, java.net.SocketAddress remote, Throwable cause) {}

  /**
   * Leader, first thing in {@code startTransaction}. The value rides on the {@code
   * TransactionContext} as its (leader-local, never replicated) state machine context and comes
   * back to {@link #applied}.
   */
  default Object requestStarted() {
    return null;
  }

  /**
   * Leader: a request answered without a log entry (overloaded, a revoke its caller may not make,
   * or one that does not decode), with the answer the caller gets. {@code command} is null when the
   * request could not be decoded into one.
   */
  default void refusedEarly(Command command, Outcome refusal) {}

  /**
   * Every replica, on the apply thread under the state machine's write lock, after the core applied
   * {@code command}: {@code outcome} is what it answered (with the {@link Outcome#facts() facts} it
   * reports), {@code applyNanos} how long the core took. {@code requestContext} is what {@link
   * #requestStarted} returned when this node stamped the entry as leader, else null.
   */
  default void applied(Command command, Outcome outcome, long applyNanos, Object requestContext) {}

  /**
   * Every replica, under the write lock: an entry carrying a batch of {@code commands} is being
   * applied.
   */
  default void batchApplied(int commands) {}

  /** Every replica, under the write lock: the lease events of the entry just applied, in order. */
  default void leaseEvents(List<LeaseEvent> events) {}

  /**
   * A request refused because the caller's identity may not make it: an admin operation from a
   * non-admin, the Raft protocol from a non-node, or another identity's lease. {@code operation}
   * names what was asked, {@code caller} is the certificate CN.
   */
  default void denied(String operation, String caller, String message) {}

  /**
   * A read refused with OVERLOADED when it arrived, because the node already held {@code
   * overload.pending-reads.max} reads; {@code caller} is the certificate CN ("" without TLS).
   */
  default void readOverloaded(String caller) {}

  /** Ratis learned of a (new) leader; {@code newLeader} is never null. */
  default void leaderChanged(RaftPeerId newLeader) {}

  /** On the leader, its latest view of each follower's progress; empty on any other node. */
  default List<FollowerLag> followers() {
    return List.of();
  }

  /**
   * The port this node serves {@code /metrics} on, for the node's self-description; -1 when none.
   */
  default int httpPort() {
    return -1;
  }
}
