package dev.fencekeeper.statemachine;

import dev.fencekeeper.config.Overload;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.metrics.StateMachineMetrics;
import dev.fencekeeper.metrics.StateReader;
import dev.fencekeeper.proto.Request;
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
 * The leader's decision about each request it receives, before anything is logged: the entry to
 * append, or the answer to give at once. It decodes the request, authorizes a revoke, takes pending
 * slots ({@link PendingSlots}) and stamps the leader's time. Everything else is judged in apply,
 * batched commands one by one: a stale write, a malformed command. Each refusal given here is
 * reported to the metrics here, once.
 *
 * <p>Only three kinds of request are answered here: one that does not decode into a command, a
 * revoke by a non-admin, and any command when the leader holds as many unapplied commands as it
 * may. Commands from this node's own client port are never refused here (the port judged them
 * before queueing them, and answers its callers with typed results); a command that arrived through
 * Ratis's client on the Raft port can only be answered through Ratis's exception channel, so its
 * refusal is a plain exception whose message names the result code and says why.
 */
final class Admission {
  private final LeaderClock leaderClock;
  private final StateReader state;
  private volatile ClientId internalClientId;
  private volatile ClientId clientPortId;
  private volatile ClientId readBarrierClientId;
  private volatile String clientAddress = "";
  private volatile Security security = Security.none();
  private volatile PendingSlots pendingSlots =
      new PendingSlots(Overload.DEFAULT_MAX_PENDING_WRITES);
  private volatile StateMachineMetrics metrics = StateMachineMetrics.NONE;

  Admission(LeaderClock leaderClock, StateReader state) {
    this.leaderClock = leaderClock;
    this.state = state;
  }

  void setInternalClientId(ClientId id) {
    this.internalClientId = id;
  }

  /**
   * Requests from this client id come from this node's own client port, which decoded, authorized
   * and bounded them (one pending slot per command, taken before they were queued) and stamped
   * every request of a batch with its caller: they are logged as they are, with {@code
   * inner_callers}.
   */
  void setClientPortId(ClientId id) {
    this.clientPortId = id;
  }

  /**
   * Requests from this client id are the client port's read barriers: ticks it proposes through
   * this node so that a read waits for an entry committed after it arrived.
   */
  void setReadBarrierClientId(ClientId id) {
    this.readBarrierClientId = id;
  }

  /** This node's client address, written into its takeover entries for followers' redirects. */
  void setClientAddress(String address) {
    this.clientAddress = address == null ? "" : address;
  }

  void setSecurity(Security security) {
    this.security = security;
  }

  /** Sizes the pending slots (overload.pending-writes.max); set before the server starts. */
  void setOverload(Overload overload) {
    this.pendingSlots = new PendingSlots(overload.maxPendingWrites());
  }

  void setMetrics(StateMachineMetrics metrics) {
    this.metrics = metrics;
  }

  /** The number of client commands this node accepted as leader and has not yet applied. */
  int pendingCommands() {
    return pendingSlots.inUse();
  }

  /** The leader's bound on pending commands, shared by Ratis's client path and the client port. */
  PendingSlots pendingSlots() {
    return pendingSlots;
  }

  /** What the leader does with one request: log it, or answer it now. */
  sealed interface Decision permits ToLog, Answered {}

  /**
   * Append {@code entry}; {@code context} stays on this node (the metrics' timing and the pending
   * slots) and comes back to apply.
   */
  record ToLog(LoggedCommand entry, Started context) implements Decision {}

  /** Answer {@code response} without a log entry. */
  record Answered(Response response) implements Decision {
    /**
     * The answer as Ratis's {@code startTransaction} must carry it: an exception on the context,
     * readable as it is ("OVERLOADED: ..."). A JDK type: Ratis serializes it to the caller, which
     * may not have fencekeeper's server classes.
     */
    IOException asException() {
      return new IOException(response.getCode() + ": " + response.getMessage());
    }

    /** The refusal a started transaction carries, if {@code context} is one. */
    static Response of(Object context) {
      return context instanceof Answered a ? a.response() : null;
    }
  }

  /**
   * A started transaction's leader-local context: the metrics' timing and its place in the queue.
   */
  record Started(Object timing, PendingSlot slot) {
    void releaseSlot() {
      if (slot != null) {
        slot.release();
      }
    }

    /** The context's timing, or null when {@code context} is not one the leader started. */
    static Object timingOf(Object context) {
      return context instanceof Started s ? s.timing() : null;
    }

    /** Frees the slots of {@code context} when it is one the leader started. */
    static void release(Object context) {
      if (context instanceof Started s) {
        s.releaseSlot();
      }
    }
  }

  Decision admit(RaftClientRequest request) {
    Object timing = metrics.requestStarted();
    try {
      Stamped stamped = stamped(request);
      PendingSlot slot = null;
      if (stamped.clientCommands() > 0) {
        PendingSlots slots = pendingSlots;
        slot = slots.tryTake(stamped.clientCommands());
        if (slot == null) {
          throw new Refused(slots.overloaded(), stamped.command());
        }
      }
      return new ToLog(stamped.logged(), new Started(timing, slot));
    } catch (Refused refused) {
      metrics.refusedEarly(refused.command, refused.outcome);
      return new Answered(WireCodec.toResponse(refused.outcome));
    }
  }

  /**
   * A log entry ready to append, and the client commands it carries ({@code command}: one, or a
   * batch of them, {@code clientCommands} in all; null and 0 for an internal command).
   */
  private record Stamped(LoggedCommand logged, Command command, int clientCommands) {}

  private Stamped stamped(RaftClientRequest request) {
    ByteString content = request.getMessage().getContent();
    LoggedCommand.Builder logged = LoggedCommand.newBuilder();
    Command clientCommand = null;
    if (clientPortId != null && clientPortId.equals(request.getClientId())) {
      // Decoded, authorized and given its pending slots by the client port before it was queued.
      logged.setClientRequest(content).setInnerCallers(true);
      return new Stamped(
          logged.setStampMs(leaderClock.stampMs(() -> state.read(FencingState::nowMs))).build(),
          null,
          0);
    }
    if (request.getClientId().equals(internalClientId)
        || request.getClientId().equals(readBarrierClientId)) {
      InternalRequest internal = parseInternal(content);
      switch (internal.getBodyCase()) {
        // Stamped with this leader's lineage and client address here, as the time is: the proposer
        // need not know them.
        case TAKEOVER ->
            logged.setTakeover(
                Takeover.newBuilder()
                    .setLineage(state.read(FencingState::lineage))
                    .setClientAddress(clientAddress));
        case TICK -> logged.setTick(internal.getTick());
        default -> throw new Refused(Outcome.invalid("empty internal request"), null);
      }
    } else {
      Request parsed = parseRequest(content);
      Command command = WireCodec.toCommand(parsed);
      if (command == null) {
        throw new Refused(Outcome.invalid(WireCodec.whyNoCommand(parsed)), null);
      }
      clientCommand = command;
      if (command instanceof Command.Revoke && !security.isAdmin(parsed.getCaller())) {
        throw new Refused(permissionDenied("revoke", parsed.getCaller()), command);
      }
      // The client's bytes go into the entry as they are: apply decodes exactly what the client
      // sent.
      logged.setClientRequest(content);
    }
    int clientCommands =
        clientCommand == null
            ? 0
            : clientCommand instanceof Command.Batch b ? b.commands().size() : 1;
    return new Stamped(
        logged.setStampMs(leaderClock.stampMs(() -> state.read(FencingState::nowMs))).build(),
        clientCommand,
        clientCommands);
  }

  /** A request answered on the leader without a log entry. */
  private static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient Outcome outcome;
    private final transient Command command;

    /** {@code command} is null when the request did not decode into one. */
    Refused(Outcome outcome, Command command) {
      super(outcome.message(), null, false, false);
      this.outcome = outcome;
      this.command = command;
    }
  }

  static Outcome permissionDenied(String operation, String caller) {
    return Outcome.of(Code.PERMISSION_DENIED)
        .message("identity '" + caller + "' may not " + operation + ": it is not in authz.admins")
        .build();
  }

  private static Request parseRequest(ByteString content) {
    try {
      return Request.parseFrom(content.asReadOnlyByteBuffer());
    } catch (InvalidProtocolBufferException e) {
      throw new Refused(Outcome.invalid("malformed request: " + e.getMessage()), null);
    }
  }

  private static InternalRequest parseInternal(ByteString content) {
    try {
      return InternalRequest.parseFrom(content.asReadOnlyByteBuffer());
    } catch (InvalidProtocolBufferException e) {
      throw new Refused(Outcome.invalid("malformed internal request: " + e.getMessage()), null);
    }
  }
}
