package dev.fencekeeper.statemachine;

import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.LeaseEvent;
import dev.fencekeeper.core.LeaseRecord;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.core.ResourceRecord;
import dev.fencekeeper.core.ValueRecord;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.ListEntry;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.WriteRequest;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Function;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
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
    if (request.getCommandCase() == Request.CommandCase.BATCH) {
      // The node stamps only the envelope's caller (server/CallerGate); whatever the requests
      // inside
      // name is ignored, so a batch cannot borrow another identity.
      List<Command> commands = new ArrayList<>(request.getBatch().getRequestsCount());
      for (Request inner : request.getBatch().getRequestsList()) {
        Command command =
            inner.getCommandCase() == Request.CommandCase.BATCH
                ? null
                : toCommand(inner, request.getCaller());
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
              + "; only acquire, renew, release, write and cancel_wait may be batched";
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
            caller);
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
      default:
        return null;
    }
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

  /** A command the leader refused without logging it, and the answer the caller gets for it. */
  public record Refusal(Command command, Response response) {}

  /**
   * A client's batch as the leader logs it: {@code refused}, the commands it answered at once, by
   * their 0-based position in the client's batch; {@code toLog}, the client's request carrying only
   * the other commands, in the client's order, or null when every command was refused; {@code
   * logged}, those other commands.
   */
  public record SplitBatch(
      SortedMap<Integer, Refusal> refused, Request toLog, Command.Batch logged) {
    /** The answers to the refused commands, by position. */
    public SortedMap<Integer, Response> answers() {
      SortedMap<Integer, Response> answers = new TreeMap<>();
      refused.forEach((position, r) -> answers.put(position, r.response()));
      return answers;
    }
  }

  /**
   * Splits {@code request}, a client's batch that decoded into {@code batch}, into the commands for
   * which {@code refusal} has an answer now and the rest, to log. The leader passes the rule it
   * refuses a lone command by ({@code FencingState.refusalBeforeLog}), so each command answered
   * here gets exactly the answer it would have got alone.
   */
  public static SplitBatch splitBatch(
      Request request, Command.Batch batch, Function<Command, Outcome> refusal) {
    List<Request> requests = request.getBatch().getRequestsList();
    if (requests.size() != batch.commands().size()) {
      throw new IllegalArgumentException(
          "a batch of "
              + requests.size()
              + " requests decoded into "
              + batch.commands().size()
              + " commands");
    }
    SortedMap<Integer, Refusal> refused = new TreeMap<>();
    BatchRequest.Builder rest = BatchRequest.newBuilder();
    List<Command> logged = new ArrayList<>();
    for (int i = 0; i < requests.size(); i++) {
      Command command = batch.commands().get(i);
      Outcome answer = refusal.apply(command);
      if (answer != null) {
        refused.put(i, new Refusal(command, toResponse(answer)));
      } else {
        rest.addRequests(requests.get(i));
        logged.add(command);
      }
    }
    Request toLog =
        logged.isEmpty()
            ? null
            : refused.isEmpty() ? request : request.toBuilder().setBatch(rest).build();
    return new SplitBatch(refused, toLog, new Command.Batch(logged));
  }

  /**
   * The answer to a whole batch, BATCH_ANSWERED: the {@code early} answers at their positions, and
   * the {@code others}, in order, in the positions left, so that the i-th answer is the i-th
   * request's (the client matches them by position). The envelope's time is the latest any answer
   * reflects.
   *
   * @throws IllegalArgumentException when a position lies outside the batch the answers make up
   */
  public static Response mergeBatchAnswers(
      SortedMap<Integer, Response> early, List<Response> others) {
    int size = early.size() + others.size();
    if (!early.isEmpty() && (early.firstKey() < 0 || early.lastKey() >= size)) {
      throw new IllegalArgumentException(
          "answers at positions " + early.keySet() + " do not fit a batch of " + size);
    }
    Response.Builder b = Response.newBuilder().setCode(ResultCode.BATCH_ANSWERED);
    int next = 0;
    long nowMs = 0;
    for (int position = 0; position < size; position++) {
      Response answer = early.containsKey(position) ? early.get(position) : others.get(next++);
      b.addBatch(answer);
      nowMs = Math.max(nowMs, answer.getNowMs());
    }
    return b.setNowMs(nowMs).build();
  }

  private static Command.Write toWrite(WriteRequest w, String caller) {
    List<Command.KeyWrite> writes = new ArrayList<>(w.getWritesCount());
    for (KeyWrite kw : w.getWritesList()) {
      writes.add(new Command.KeyWrite(kw.getKey(), kw.getValue().toByteArray(), kw.getDelete()));
    }
    return new Command.Write(w.getResource(), w.getToken(), writes, w.getRequestId(), caller);
  }

  public static boolean isQuery(Request request) {
    return switch (request.getCommandCase()) {
      case READ, LEASE, VALIDATE, NODE_INFO, WATCH, LIST -> true;
      default -> false;
    };
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
        .build();
  }

  private static final int DEFAULT_PAGE = 100;
  private static final int MAX_PAGE = 1000;

  /** One page of an operator listing, read from {@code state} under the caller's read lock. */
  static Response listing(FencingState state, ListRequest list) {
    int limit = list.getLimit() <= 0 ? DEFAULT_PAGE : Math.min(list.getLimit(), MAX_PAGE);
    Response.Builder b = Response.newBuilder().setCode(ResultCode.FOUND).setNowMs(state.nowMs());
    if (list.getWhat() == ListRequest.What.KEYS) {
      if (list.getResource().isEmpty()) {
        return invalid("resource: required to list keys");
      }
      List<Map.Entry<String, ValueRecord>> keys =
          state.listKeys(list.getResource(), list.getPrefix(), list.getAfter(), limit + 1);
      for (Map.Entry<String, ValueRecord> e : keys.subList(0, Math.min(limit, keys.size()))) {
        ValueRecord v = e.getValue();
        b.addEntries(
            ListEntry.newBuilder()
                .setResource(list.getResource())
                .setKey(e.getKey())
                .setAcceptedToken(v.acceptedToken())
                .setVersion(v.version())
                .setValueBytes(v.value().length)
                .setWrittenAtMs(v.writtenAtMs()));
      }
      return b.setMore(keys.size() > limit).build();
    }
    List<ResourceRecord> resources =
        state.listResources(list.getPrefix(), list.getAfter(), limit + 1);
    for (ResourceRecord r : resources.subList(0, Math.min(limit, resources.size()))) {
      ListEntry.Builder e =
          ListEntry.newBuilder()
              .setResource(r.name())
              .setCurrentToken(r.lastToken())
              .setWaiters(r.waiters().size());
      LeaseRecord live = r.liveLease(state.nowMs());
      if (live != null) {
        e.setToken(live.token())
            .setOwner(live.owner())
            .setExpiresAtMs(live.expiresAtMs())
            .setLive(true);
      }
      b.addEntries(e);
    }
    return b.setMore(resources.size() > limit).build();
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
