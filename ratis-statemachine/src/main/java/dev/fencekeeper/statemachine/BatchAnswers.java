package dev.fencekeeper.statemachine;

import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.statemachine.proto.AnsweredEarly;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Function;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;

/**
 * A client's batch whose commands are answered in two places: some by the leader before the log
 * ({@link Admission}), the rest by apply. The leader splits the batch; the refused commands'
 * answers travel in the log entry ({@code LoggedCommand.answered_early}); every replica merges them
 * back by position, so each answers the whole batch alike.
 */
public final class BatchAnswers {
  private BatchAnswers() {}

  /** A command the leader refused without logging it, and the answer the caller gets for it. */
  public record Refusal(Command command, Outcome outcome, Response response) {
    Refusal(Command command, Outcome outcome) {
      this(command, outcome, WireCodec.toResponse(outcome));
    }
  }

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
        refused.put(i, new Refusal(command, answer));
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

  /** Records {@code answers} in the entry the leader is about to log. */
  static void record(LoggedCommand.Builder entry, SortedMap<Integer, Response> answers) {
    answers.forEach(
        (position, answer) ->
            entry.addAnsweredEarly(
                AnsweredEarly.newBuilder()
                    .setPosition(position)
                    .setResponse(answer.toByteString())));
  }

  /**
   * The answers the leader gave commands of the client's batch instead of logging them, by position
   * in that batch; empty for most entries; null when they cannot belong to {@code command} (only a
   * batch has them, and each must take a distinct position within the batch they and its logged
   * commands make up). Checked before anything is applied: a malformed entry changes nothing.
   */
  static SortedMap<Integer, Response> recorded(LoggedCommand logged, Command command)
      throws InvalidProtocolBufferException {
    SortedMap<Integer, Response> answers = new TreeMap<>();
    for (AnsweredEarly answered : logged.getAnsweredEarlyList()) {
      if (answers.put(answered.getPosition(), Response.parseFrom(answered.getResponse())) != null) {
        return null;
      }
    }
    if (answers.isEmpty()) {
      return answers;
    }
    if (!(command instanceof Command.Batch batch)) {
      return null;
    }
    boolean fits =
        answers.firstKey() >= 0 && answers.lastKey() < answers.size() + batch.commands().size();
    return fits ? answers : null;
  }
}
