package dev.fencekeeper.statemachine;

import dev.fencekeeper.client.wire.LeaderRejection;
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
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;

/**
 * The leader's decision about each request it receives, before anything is logged: the entry to
 * append, or the answer to give at once. It decodes the request, authorizes a revoke, refuses what
 * can be refused before the log ({@link FencingState#refusalBeforeLog}: alone, or command by
 * command inside a batch, see {@link BatchAnswers}), takes pending slots ({@link PendingSlots}) and
 * stamps the leader's time. Each refusal is reported to the metrics here, once.
 *
 * <p>An answer given here reaches the client through Ratis's exception channel, encoded by {@link
 * LeaderRejection}; the client turns it back into an ordinary result.
 */
final class Admission {
  private final LeaderClock leaderClock;
  private final StateReader state;
  private volatile ClientId internalClientId;
  private volatile Security security = Security.none();
  private volatile PendingSlots pendingSlots =
      new PendingSlots(Overload.DEFAULT_MAX_PENDING_WRITES);
  private volatile StateMachineMetrics metrics = StateMachineMetrics.NONE;

  /**
   * Internal, for measuring only: {@code -Dfencekeeper.internal.refuse-before-log=false} logs every
   * decoded command, stale ones included, instead of refusing them here (apply refuses them with
   * the same answer); docs/benchmarks.md, "Early refusal", compares the two. Authorization and
   * overload are decided here either way.
   */
  private static final boolean REFUSE_BEFORE_LOG =
      !"false".equals(System.getProperty("fencekeeper.internal.refuse-before-log"));

  Admission(LeaderClock leaderClock, StateReader state) {
    this.leaderClock = leaderClock;
    this.state = state;
  }

  void setInternalClientId(ClientId id) {
    this.internalClientId = id;
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
     * The answer as Ratis's {@code startTransaction} must carry it: an exception on the context.
     */
    IOException asException() {
      return new IOException(LeaderRejection.encode(response));
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
    PendingSlot slot = null;
    try {
      Stamped stamped = stamped(request);
      if (stamped.clientCommands() > 0) {
        PendingSlots slots = pendingSlots;
        slot = slots.tryTake(stamped.clientCommands());
        if (slot == null) {
          throw overloaded(slots.overloaded(), stamped);
        }
      }
      return new ToLog(stamped.logged(), new Started(timing, slot));
    } catch (EarlyAnswer answer) {
      if (slot != null) {
        slot.release();
      }
      for (BatchAnswers.Refusal refusal : answer.uncounted) {
        metrics.refusedEarly(refusal.command(), refusal.outcome());
      }
      return new Answered(answer.response);
    }
  }

  /**
   * A log entry ready to append; the client commands it carries ({@code command}: one, or a batch
   * of them, {@code clientCommands} in all); and the answers to the commands of the client's batch
   * that were refused instead of logged, by position.
   */
  private record Stamped(
      LoggedCommand logged,
      Command command,
      int clientCommands,
      SortedMap<Integer, Response> answeredEarly) {}

  /**
   * When the leader already holds as many unapplied commands as it may: the commands that would
   * have been logged are answered OVERLOADED; commands of the batch refused before that keep their
   * refusal, as they would have alone.
   */
  private static EarlyAnswer overloaded(Outcome overloaded, Stamped stamped) {
    if (stamped.answeredEarly().isEmpty()) {
      return new EarlyAnswer(overloaded, stamped.command());
    }
    BatchAnswers.Refusal refusal = new BatchAnswers.Refusal(stamped.command(), overloaded);
    Response merged =
        BatchAnswers.mergeBatchAnswers(
            stamped.answeredEarly(),
            Collections.nCopies(stamped.clientCommands(), refusal.response()));
    return new EarlyAnswer(merged, List.of(refusal));
  }

  private Stamped stamped(RaftClientRequest request) {
    ByteString content = request.getMessage().getContent();
    LoggedCommand.Builder logged = LoggedCommand.newBuilder();
    Command clientCommand = null;
    SortedMap<Integer, Response> answeredEarly = Collections.emptySortedMap();
    if (internalClientId != null && internalClientId.equals(request.getClientId())) {
      InternalRequest internal = parseInternal(content);
      switch (internal.getBodyCase()) {
        // Stamped with this leader's lineage here, as the time is: the proposer need not know it.
        case TAKEOVER ->
            logged.setTakeover(Takeover.newBuilder().setLineage(state.read(FencingState::lineage)));
        case TICK -> logged.setTick(internal.getTick());
        default -> throw new EarlyAnswer(Outcome.invalid("empty internal request"), null);
      }
    } else {
      Request parsed = parseRequest(content);
      Command command = WireCodec.toCommand(parsed);
      if (command == null) {
        throw new EarlyAnswer(Outcome.invalid(WireCodec.whyNoCommand(parsed)), null);
      }
      clientCommand = command;
      if (command instanceof Command.Revoke && !security.isAdmin(parsed.getCaller())) {
        throw new EarlyAnswer(permissionDenied("revoke", parsed.getCaller()), command);
      }
      Outcome refusal = REFUSE_BEFORE_LOG ? state.read(s -> s.refusalBeforeLog(command)) : null;
      if (refusal != null) {
        throw new EarlyAnswer(refusal, command);
      }
      // The client's bytes go into the entry as they are: apply decodes exactly what the client
      // sent (for a batch with refused commands: the client's other requests, as the client sent
      // them).
      ByteString clientRequest = content;
      if (REFUSE_BEFORE_LOG && command instanceof Command.Batch batch) {
        // Each command of a batch the leader would refuse alone is refused here too, by the same
        // rule, with the same answer; only the others are logged. Each refusal is counted here,
        // once, whatever becomes of the others.
        BatchAnswers.SplitBatch split =
            state.read(s -> BatchAnswers.splitBatch(parsed, batch, s::refusalBeforeLog));
        split.refused().values().forEach(r -> metrics.refusedEarly(r.command(), r.outcome()));
        if (split.toLog() == null) {
          throw new EarlyAnswer(
              BatchAnswers.mergeBatchAnswers(split.answers(), List.of()), List.of());
        }
        if (!split.refused().isEmpty()) {
          clientCommand = split.logged();
          clientRequest = split.toLog().toByteString();
          answeredEarly = split.answers();
          BatchAnswers.record(logged, answeredEarly);
        }
      }
      logged.setClientRequest(clientRequest);
    }
    int clientCommands =
        clientCommand == null
            ? 0
            : clientCommand instanceof Command.Batch b ? b.commands().size() : 1;
    return new Stamped(
        logged.setStampMs(leaderClock.nowMs()).build(),
        clientCommand,
        clientCommands,
        answeredEarly);
  }

  /**
   * A request answered on the leader without a log entry, with the refusals the metrics have yet to
   * see.
   */
  private static final class EarlyAnswer extends RuntimeException {
    private final transient Response response;
    private final transient List<BatchAnswers.Refusal> uncounted;

    /** {@code command} is null when the request did not decode into one. */
    EarlyAnswer(Outcome refusal, Command command) {
      this(new BatchAnswers.Refusal(command, refusal));
    }

    private EarlyAnswer(BatchAnswers.Refusal refusal) {
      this(refusal.response(), List.of(refusal));
    }

    EarlyAnswer(Response response, List<BatchAnswers.Refusal> uncounted) {
      super(response.getMessage(), null, false, false);
      this.response = response;
      this.uncounted = uncounted;
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
      throw new EarlyAnswer(Outcome.invalid("malformed request: " + e.getMessage()), null);
    }
  }

  private static InternalRequest parseInternal(ByteString content) {
    try {
      return InternalRequest.parseFrom(content.asReadOnlyByteBuffer());
    } catch (InvalidProtocolBufferException e) {
      throw new EarlyAnswer(Outcome.invalid("malformed internal request: " + e.getMessage()), null);
    }
  }
}
