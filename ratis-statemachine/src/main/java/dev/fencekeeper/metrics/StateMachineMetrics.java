package dev.fencekeeper.metrics;

import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.LeaseEvent;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.util.List;
import java.util.function.Supplier;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * What the Ratis adapter tells the metrics about the requests it handles. Every method is
 * observation only: it never changes the state, the outcome or the reply, and it never throws into
 * Ratis. The default methods do nothing, so {@link #NONE} is a state machine without metrics.
 */
public interface StateMachineMetrics {
  StateMachineMetrics NONE = new StateMachineMetrics() {};

  /**
   * Leader, first thing in {@code startTransaction}. The value rides on the {@code
   * TransactionContext} as its (leader-local, never replicated) state machine context and comes
   * back to {@link #apply}.
   */
  default Object requestStarted() {
    return null;
  }

  /**
   * Leader: a request answered without a log entry. {@code command} is null when the request could
   * not be decoded into one.
   */
  default void refusedEarly(Command command, ResultCode code) {}

  /**
   * As {@link #refusedEarly(Command, ResultCode)}, with the whole answer the caller gets (tokens,
   * holder), for observers that record more than the code. The state machine calls this one.
   */
  default void refusedEarly(Command command, Response response) {
    refusedEarly(command, response.getCode());
  }

  /**
   * Every replica, on the apply thread under the state machine's write lock: {@code delegate} runs
   * {@code FencingState.apply} for {@code command}; its outcome is returned unchanged. {@code
   * requestContext} is what {@link #requestStarted} returned when this node stamped the entry as
   * leader, else null.
   */
  default Outcome apply(
      Command command, FencingState state, Object requestContext, Supplier<Outcome> delegate) {
    return delegate.get();
  }

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

  /**
   * The port this node serves {@code /metrics} on, for the node's self-description; -1 when none.
   */
  default int httpPort() {
    return -1;
  }
}
