package dev.fencekeeper.statemachine;

import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.metrics.StateMachineMetrics;
import dev.fencekeeper.metrics.StateReader;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.statemachine.proto.InternalRequest;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import dev.fencekeeper.statemachine.proto.Takeover;
import java.io.IOException;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;

/**
 * The leader's decision about each request Ratis hands to {@code startTransaction}: the entry to
 * append, stamped with the leader's time, or the answer to give at once.
 *
 * <p>Requests reach a node's Raft server from one place, the node itself (its {@code LocalRaft}):
 * the client port's commands, under the client port's client id, which it decoded, authorized and
 * bounded (pending slots, {@link PendingSlots}) before queueing them and stamped each with its
 * caller; and the node's own entries (takeover, expiry ticks, read barriers) under its internal
 * client id. The Raft port refuses Ratis's client service, so nothing else arrives; a request under
 * any other client id is refused here all the same, and so is an internal request that does not
 * decode. Each refusal is reported to the metrics here, once.
 */
final class Admission {
  private final LeaderClock leaderClock;
  private final StateReader state;
  private volatile ClientId internalClientId;
  private volatile ClientId clientPortId;
  private volatile String clientAddress = "";
  private volatile StateMachineMetrics metrics = StateMachineMetrics.NONE;

  Admission(LeaderClock leaderClock, StateReader state) {
    this.leaderClock = leaderClock;
    this.state = state;
  }

  /** Requests from this client id are this node's own entries ({@code InternalRequest}s). */
  void setInternalClientId(ClientId id) {
    this.internalClientId = id;
  }

  /**
   * Requests from this client id come from this node's own client port, which decoded, authorized
   * and bounded them and stamped every request of a batch with its caller: they are logged as they
   * are, with {@code inner_callers}.
   */
  void setClientPortId(ClientId id) {
    this.clientPortId = id;
  }

  /** This node's client address, written into its takeover entries for followers' redirects. */
  void setClientAddress(String address) {
    this.clientAddress = address == null ? "" : address;
  }

  void setMetrics(StateMachineMetrics metrics) {
    this.metrics = metrics;
  }

  /** What the leader does with one request: log it, or answer it now. */
  sealed interface Decision permits ToLog, Answered {}

  /**
   * Append {@code entry}; {@code context} (the metrics' timing) stays on this node and comes back
   * to apply.
   */
  record ToLog(LoggedCommand entry, Started context) implements Decision {}

  /** Answer {@code response} without a log entry. */
  record Answered(Response response) implements Decision {
    /**
     * The answer as Ratis's {@code startTransaction} must carry it: an exception on the context,
     * readable as it is ("PERMISSION_DENIED: ...").
     */
    IOException asException() {
      return new IOException(response.getCode() + ": " + response.getMessage());
    }
  }

  /** A started transaction's leader-local context: the metrics' timing. */
  record Started(Object timing) {
    /** The context's timing, or null when {@code context} is not one the leader started. */
    static Object timingOf(Object context) {
      return context instanceof Started s ? s.timing() : null;
    }
  }

  Decision admit(RaftClientRequest request) {
    Object timing = metrics.requestStarted();
    ByteString content = request.getMessage().getContent();
    LoggedCommand.Builder logged = LoggedCommand.newBuilder();
    if (request.getClientId().equals(clientPortId)) {
      logged.setClientRequest(content).setInnerCallers(true);
    } else if (request.getClientId().equals(internalClientId)) {
      InternalRequest internal;
      try {
        internal = InternalRequest.parseFrom(content.asReadOnlyByteBuffer());
      } catch (InvalidProtocolBufferException e) {
        return refused(Outcome.invalid("malformed internal request: " + e.getMessage()));
      }
      switch (internal.getBodyCase()) {
        // Stamped with this leader's lineage and client address here, as the time is: the proposer
        // need not know them.
        case TAKEOVER ->
            logged.setTakeover(
                Takeover.newBuilder()
                    .setLineage(state.read(FencingState::lineage))
                    .setClientAddress(clientAddress));
        case TICK -> logged.setTick(internal.getTick());
        default -> {
          return refused(Outcome.invalid("empty internal request"));
        }
      }
    } else {
      return refused(
          Outcome.of(Code.PERMISSION_DENIED)
              .message(
                  "client "
                      + request.getClientId()
                      + " is not this node's client port: commands enter the log only through a"
                      + " node's client port")
              .build());
    }
    return new ToLog(
        logged.setStampMs(leaderClock.stampMs(() -> state.read(FencingState::nowMs))).build(),
        new Started(timing));
  }

  private Answered refused(Outcome outcome) {
    metrics.refusedEarly(null, outcome);
    return new Answered(WireCodec.toResponse(outcome));
  }

  static Outcome permissionDenied(String operation, String caller) {
    return Outcome.of(Code.PERMISSION_DENIED)
        .message("identity '" + caller + "' may not " + operation + ": it is not in authz.admins")
        .build();
  }
}
