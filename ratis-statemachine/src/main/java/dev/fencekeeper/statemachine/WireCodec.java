package dev.fencekeeper.statemachine;

import dev.fencekeeper.client.wire.RequestKinds;
import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.LeaseEvent;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.WriteRequest;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * The one place where wire messages (fencing.proto) and the core's types meet: requests become
 * {@link Command}s, {@link Outcome}s become responses, and {@link Code} maps to {@link ResultCode}.
 */
public final class WireCodec {
  private static final Map<Code, ResultCode> RESULT_CODES = new EnumMap<>(Code.class);

  static {
    for (Code code : Code.values()) {
      RESULT_CODES.put(
          code,
          code == Code.OK ? ResultCode.RESULT_CODE_UNSPECIFIED : ResultCode.valueOf(code.name()));
    }
  }

  private WireCodec() {}

  public static ResultCode resultCode(Code code) {
    return RESULT_CODES.get(code);
  }

  /**
   * The command a mutating request carries, or null when the request is a query (or empty). Tokens
   * are unsigned on the wire; one beyond Long.MAX_VALUE reads negative here and fails validation.
   */
  public static Command toCommand(Request request) {
    return toCommand(request, false);
  }

  /**
   * As {@link #toCommand(Request)}; with {@code innerCallers}, each request of a batch is the
   * command of its own {@code caller}, as a leader that coalesced the requests of several callers
   * wrote them (its client port stamps every one). Without, the envelope's caller is every
   * command's: so were entries written before every command entered through the client port, when
   * commands sent through Ratis's client had only their envelope stamped, so whatever the requests
   * inside name is ignored there and a batch cannot borrow another identity.
   */
  public static Command toCommand(Request request, boolean innerCallers) {
    if (request.getCommandCase() == Request.CommandCase.BATCH) {
      List<Command> commands = new ArrayList<>(request.getBatch().getRequestsCount());
      for (Request inner : request.getBatch().getRequestsList()) {
        Command command =
            inner.getCommandCase() == Request.CommandCase.BATCH
                ? null
                : toCommand(inner, innerCallers ? inner.getCaller() : request.getCaller());
        if (command == null) {
          return null;
        }
        commands.add(command);
      }
      return new Command.Batch(commands);
    }
    return toCommand(request, request.getCaller());
  }

  /**
   * Why {@link #toCommand} found no command in {@code request}: the message for INVALID_ARGUMENT.
   */
  public static String whyNoCommand(Request request) {
    if (request.getCommandCase() == Request.CommandCase.BATCH) {
      List<Request> inner = request.getBatch().getRequestsList();
      for (int i = 0; i < inner.size(); i++) {
        if (inner.get(i).getCommandCase() == Request.CommandCase.BATCH
            || toCommand(inner.get(i)) == null) {
          return "batch: request "
              + (i + 1)
              + " is "
              + inner.get(i).getCommandCase().name().toLowerCase()
              + "; only "
              + RequestKinds.BATCHABLE
              + " may be batched";
        }
      }
    }
    return isQuery(request)
        ? "queries are read-only; send them as reads"
        : "the request carries no command";
  }

  private static Command toCommand(Request request, String caller) {
    switch (request.getCommandCase()) {
      case ACQUIRE:
        var a = request.getAcquire();
        return new Command.Acquire(
            a.getResource(),
            a.getOwner(),
            a.getTtlMs(),
            a.getRequestId(),
            a.getWaitMs(),
            a.getLockDelayMs(),
            caller,
            a.getSessionId());
      case CANCEL_WAIT:
        return new Command.CancelWait(
            request.getCancelWait().getResource(), request.getCancelWait().getRequestId(), caller);
      case REVOKE:
        return new Command.Revoke(
            request.getRevoke().getResource(), request.getRevoke().getReason());
      case RENEW:
        var r = request.getRenew();
        return new Command.Renew(r.getResource(), r.getToken(), r.getTtlMs(), caller);
      case RELEASE:
        var rel = request.getRelease();
        return new Command.Release(rel.getResource(), rel.getToken(), caller);
      case WRITE:
        return toWrite(request.getWrite(), caller);
      case RENEW_SESSION:
        var session = request.getRenewSession();
        return new Command.RenewSession(
            session.getSessionId(), Set.copyOf(session.getExceptTokensList()), caller);
      default:
        return null;
    }
  }

  /**
   * What a log entry asks every replica to apply: its {@code command}; or, for an entry that cannot
   * be applied, the {@code invalid} answer every replica gives it alike.
   */
  record Entry(Command command, Response invalid) {
    static Entry invalid(String message) {
      return new Entry(null, WireCodec.invalid(message));
    }
  }

  /** Decodes a log entry; every replica decodes the same bytes the same way. */
  static Entry decode(LoggedCommand logged) throws InvalidProtocolBufferException {
    Command command;
    switch (logged.getBodyCase()) {
      case TAKEOVER ->
          command =
              logged.getTakeover().hasLineage()
                  ? Command.Takeover.from(logged.getTakeover().getLineage())
                  : new Command.Takeover();
      case TICK -> command = new Command.Tick();
      case CLIENT_REQUEST -> {
        Request request = Request.parseFrom(logged.getClientRequest());
        command = toCommand(request, logged.getInnerCallers());
        if (command == null) {
          return Entry.invalid(whyNoCommand(request));
        }
      }
      default -> {
        return Entry.invalid("empty log entry");
      }
    }
    return new Entry(command, null);
  }

  /** The answer to a batch: one response per command, in order, under a BATCH_ANSWERED envelope. */
  public static Response toBatchResponse(List<Outcome> outcomes) {
    Response.Builder b = Response.newBuilder().setCode(ResultCode.BATCH_ANSWERED);
    for (Outcome o : outcomes) {
      b.addBatch(toResponse(o));
    }
    if (!outcomes.isEmpty()) {
      b.setNowMs(outcomes.get(outcomes.size() - 1).nowMs());
    }
    return b.build();
  }

  private static Command.Write toWrite(WriteRequest w, String caller) {
    List<Command.KeyWrite> writes = new ArrayList<>(w.getWritesCount());
    for (KeyWrite kw : w.getWritesList()) {
      writes.add(new Command.KeyWrite(kw.getKey(), kw.getValue().toByteArray(), kw.getDelete()));
    }
    return new Command.Write(w.getResource(), w.getToken(), writes, w.getRequestId(), caller);
  }

  /** Whether {@code request} is answered without the log (the rule is {@link RequestKinds}'). */
  public static boolean isQuery(Request request) {
    return RequestKinds.isQuery(request.getCommandCase());
  }

  public static Response toResponse(Outcome o) {
    Response.Builder b =
        Response.newBuilder()
            .setCode(resultCode(o.code()))
            .setMessage(o.message())
            .setToken(o.token())
            .setCurrentToken(o.currentToken())
            .setHolderOwner(o.holderOwner())
            .setExpiresAtMs(o.expiresAtMs())
            .setSentToken(o.sentToken())
            .setAlreadyEnded(o.alreadyEnded())
            .setAcceptedToken(o.acceptedToken())
            .setVersion(o.version())
            .setWrittenAtMs(o.writtenAtMs())
            .setKey(o.key())
            .setNowMs(o.nowMs())
            .setTtlMs(o.ttlMs())
            .setLive(o.live())
            .setPosition(o.position());
    if (o.queuedAtIndex() != 0) {
      b.setAppliedIndex(o.queuedAtIndex());
    }
    if (o.renewed() != 0) {
      b.setRenewed(o.renewed());
    }
    if (o.value().length > 0) {
      // Stored values are never mutated, so the response may share the array.
      b.setValue(UnsafeByteOperations.unsafeWrap(o.value()));
    }
    return b.build();
  }

  public static dev.fencekeeper.proto.LeaseEvent toProto(LeaseEvent e, long index, int seq) {
    return dev.fencekeeper.proto.LeaseEvent.newBuilder()
        .setIndex(index)
        .setSeq(seq)
        .setType(dev.fencekeeper.proto.LeaseEvent.Type.valueOf(e.type().name()))
        .setResource(e.resource())
        .setToken(e.token())
        .setOwner(e.owner())
        .setExpiresAtMs(e.expiresAtMs())
        .setAtMs(e.atMs())
        .setRequestId(e.requestId())
        .setSessionId(e.sessionId())
        .build();
  }

  public static Response invalid(String message) {
    return Response.newBuilder().setCode(ResultCode.INVALID_ARGUMENT).setMessage(message).build();
  }

  public static Response internal(String message) {
    return Response.newBuilder().setCode(ResultCode.INTERNAL).setMessage(message).build();
  }

  static ByteString bytes(Response response) {
    return response.toByteString();
  }
}
