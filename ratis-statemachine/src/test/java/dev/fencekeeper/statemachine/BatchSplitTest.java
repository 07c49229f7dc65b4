package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.WriteRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/**
 * The leader's split of a client's batch into the commands it refuses at once and the commands it
 * logs, and the merge of both kinds of answers back into one answer per request ({@link
 * BatchAnswers#splitBatch}, {@link BatchAnswers#mergeBatchAnswers}), against a real {@link
 * FencingState} deciding the refusals.
 */
class BatchSplitTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final String CALLER = "worker";

  /**
   * A state with a superseded token on "report" ({@link Setup#stale}), its live successor ({@link
   * Setup#current}), and a live lease on "other". Deterministic: every call builds the same state.
   */
  private static final class Setup {
    final FencingState state = new FencingState(Limits.defaults());
    long index;
    final long stale;
    final long current;
    final long other;

    Setup() {
      stale = apply(new Command.Acquire("report", "A", 60_000)).token();
      apply(new Command.Release("report", stale));
      current = apply(new Command.Acquire("report", "B", 60_000)).token();
      other = apply(new Command.Acquire("other", "C", 60_000)).token();
      apply(
          new Command.Write(
              "report", current, List.of(Command.KeyWrite.put("k", new byte[] {1})), ""));
    }

    Outcome apply(Command command) {
      return state.apply(command, ++index, T0 + index);
    }

    Response applyBatch(Request batch) {
      return WireCodec.toBatchResponse(
          state.applyBatch((Command.Batch) WireCodec.toCommand(batch), ++index, T0 + index));
    }
  }

  /**
   * Stale writes among fresh acquire, renew, release and writes, a malformed acquire, an unknown
   * token.
   */
  private static List<Request> mixed(Setup s) {
    return List.of(
        acquire("fresh", 5_000), // 0: logged
        write("report", s.stale, "k", "late"), // 1: refused, STALE_TOKEN
        renew("report", s.current), // 2: logged
        write("report", s.current, "k", "now"), // 3: logged, accepted
        write("report", s.stale, "k2", "late"), // 4: refused, STALE_TOKEN
        release("other", s.other), // 5: logged
        acquire("bad", 1), // 6: refused, INVALID_ARGUMENT (ttl below the minimum)
        write(
            "report", 999_999, "k",
            "never")); // 7: logged: a token not yet issued may still be, later
  }

  // Guarantee: exactly the commands the lone-command path would refuse before the log are refused,
  // each
  // with byte for byte the answer it would get alone; the others are logged in the client's order,
  // under
  // the client's caller.
  @Test
  void eachCommandThatWouldBeRefusedAloneIsRefusedWithItsLoneAnswerAndTheRestAreLoggedInOrder() {
    Setup s = new Setup();
    List<Request> requests = mixed(s);
    Request batch = batch(requests);

    BatchAnswers.SplitBatch split = split(s, batch);

    assertThat(split.refused().keySet()).containsExactly(1, 4, 6);
    split
        .refused()
        .forEach(
            (position, refusal) -> {
              Request alone = requests.get(position).toBuilder().setCaller(CALLER).build();
              Response loneAnswer =
                  WireCodec.toResponse(s.state.refusalBeforeLog(WireCodec.toCommand(alone)));
              assertThat(refusal.response()).as("request %d", position).isEqualTo(loneAnswer);
              assertThat(refusal.command()).isEqualTo(WireCodec.toCommand(alone));
            });
    assertThat(split.answers().values())
        .extracting(Response::getCode)
        .containsExactly(
            ResultCode.STALE_TOKEN, ResultCode.STALE_TOKEN, ResultCode.INVALID_ARGUMENT);
    assertThat(split.answers().get(1).getSentToken()).isEqualTo(s.stale);
    assertThat(split.answers().get(1).getCurrentToken()).isEqualTo(s.current);

    assertThat(split.toLog().getCaller()).isEqualTo(CALLER);
    assertThat(split.toLog().getBatch().getRequestsList())
        .containsExactly(
            requests.get(0), requests.get(2), requests.get(3), requests.get(5), requests.get(7));
    assertThat(split.logged()).isEqualTo(WireCodec.toCommand(split.toLog()));
  }

  // Guarantee: the merged answer of the smaller logged batch and the early refusals is, position by
  // position, what the whole batch applied as one entry answers: logged commands byte for byte (the
  // refused
  // ones changed nothing, so the others see the same state), refused ones with the same code; and
  // the state
  // after the smaller batch is the state after the whole one.
  @Test
  void theMergedAnswerIsWhatTheWholeBatchAppliedAnswersAndTheStateIsTheSame() throws IOException {
    Setup whole = new Setup();
    Response everythingLogged = whole.applyBatch(batch(mixed(whole)));

    Setup leader = new Setup();
    BatchAnswers.SplitBatch split = split(leader, batch(mixed(leader)));
    Response logged = leader.applyBatch(split.toLog());
    Response merged = BatchAnswers.mergeBatchAnswers(split.answers(), logged.getBatchList());

    assertThat(merged.getCode()).isEqualTo(ResultCode.BATCH_ANSWERED);
    assertThat(merged.getBatchCount()).isEqualTo(8);
    for (int i = 0; i < 8; i++) {
      if (split.refused().containsKey(i)) {
        assertThat(merged.getBatch(i)).isEqualTo(split.answers().get(i));
        assertThat(merged.getBatch(i).getCode())
            .as("request %d", i)
            .isEqualTo(everythingLogged.getBatch(i).getCode());
      } else {
        assertThat(merged.getBatch(i)).as("request %d", i).isEqualTo(everythingLogged.getBatch(i));
      }
    }
    assertThat(merged.getBatchList())
        .extracting(Response::getCode)
        .containsExactly(
            ResultCode.GRANTED,
            ResultCode.STALE_TOKEN,
            ResultCode.RENEWED,
            ResultCode.ACCEPTED,
            ResultCode.STALE_TOKEN,
            ResultCode.RELEASED,
            ResultCode.INVALID_ARGUMENT,
            ResultCode.UNKNOWN_TOKEN);
    assertThat(snapshot(leader.state)).isEqualTo(snapshot(whole.state));
  }

  // Guarantee: a batch whose every command is refused leaves nothing to log, and is still answered
  // per
  // request, in order.
  @Test
  void aBatchOfRefusedCommandsOnlyLeavesNothingToLogAndIsAnsweredPerRequest() {
    Setup s = new Setup();
    List<Request> requests =
        List.of(
            write("report", s.stale, "k", "a"),
            acquire("bad", 1),
            write("report", s.stale, "k", "b"));

    BatchAnswers.SplitBatch split = split(s, batch(requests));
    Response answer = BatchAnswers.mergeBatchAnswers(split.answers(), List.of());

    assertThat(split.toLog()).isNull();
    assertThat(split.logged().commands()).isEmpty();
    assertThat(answer.getCode()).isEqualTo(ResultCode.BATCH_ANSWERED);
    assertThat(answer.getBatchList()).containsExactlyElementsOf(split.answers().values());
    assertThat(answer.getBatchList())
        .extracting(Response::getCode)
        .containsExactly(
            ResultCode.STALE_TOKEN, ResultCode.INVALID_ARGUMENT, ResultCode.STALE_TOKEN);
    assertThat(answer.getNowMs()).isEqualTo(s.state.nowMs());
  }

  // Guarantee: a batch with nothing to refuse is logged exactly as the client sent it.
  @Test
  void aBatchWithNothingToRefuseIsLoggedAsTheClientSentIt() {
    Setup s = new Setup();
    Request batch =
        batch(
            List.of(
                acquire("fresh", 5_000),
                write("report", s.current, "k", "now"),
                renew("report", s.current)));

    BatchAnswers.SplitBatch split = split(s, batch);

    assertThat(split.refused()).isEmpty();
    assertThat(split.toLog()).isSameAs(batch);
    assertThat(split.logged()).isEqualTo(WireCodec.toCommand(batch));
  }

  // Guarantee: whichever commands are refused, merging puts every answer back at its own request's
  // position, so the client can match answers to requests by position.
  @Property
  void everyAnswerLandsAtItsOwnRequestsPosition(
      @ForAll @Size(min = 1, max = 40) List<Boolean> refusedAt) {
    List<Request> requests = new ArrayList<>();
    for (int i = 0; i < refusedAt.size(); i++) {
      requests.add(write("r", i + 1, "k", "v"));
    }
    Request batch = batch(requests);
    BatchAnswers.SplitBatch split =
        BatchAnswers.splitBatch(
            batch,
            (Command.Batch) WireCodec.toCommand(batch),
            command ->
                refusedAt.get((int) ((Command.Write) command).token() - 1)
                    ? Outcome.of(Code.STALE_TOKEN)
                        .sentToken(((Command.Write) command).token())
                        .build()
                    : null);
    List<Response> loggedAnswers = new ArrayList<>();
    for (Request logged :
        split.toLog() == null ? List.<Request>of() : split.toLog().getBatch().getRequestsList()) {
      loggedAnswers.add(
          Response.newBuilder()
              .setCode(ResultCode.ACCEPTED)
              .setToken(logged.getWrite().getToken())
              .build());
    }

    Response merged = BatchAnswers.mergeBatchAnswers(split.answers(), loggedAnswers);

    assertThat(merged.getBatchCount()).isEqualTo(requests.size());
    for (int i = 0; i < requests.size(); i++) {
      Response answer = merged.getBatch(i);
      assertThat(answer.getCode())
          .isEqualTo(refusedAt.get(i) ? ResultCode.STALE_TOKEN : ResultCode.ACCEPTED);
      assertThat(refusedAt.get(i) ? answer.getSentToken() : answer.getToken()).isEqualTo(i + 1);
    }
  }

  // Guarantee: answers whose positions do not fit the batch they make up are refused, never
  // misplaced.
  @Test
  void answersThatDoNotFitTheBatchAreRefused() {
    Response early = Response.newBuilder().setCode(ResultCode.STALE_TOKEN).build();
    Response logged = Response.newBuilder().setCode(ResultCode.ACCEPTED).build();
    SortedMap<Integer, Response> beyond = new TreeMap<>(java.util.Map.of(2, early));
    SortedMap<Integer, Response> negative = new TreeMap<>(java.util.Map.of(-1, early));

    assertThatThrownBy(() -> BatchAnswers.mergeBatchAnswers(beyond, List.of(logged)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BatchAnswers.mergeBatchAnswers(negative, List.of(logged)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(
            BatchAnswers.mergeBatchAnswers(
                    new TreeMap<>(java.util.Map.of(1, early)), List.of(logged))
                .getBatchList())
        .containsExactly(logged, early);
  }

  // ---------------------------------------------------------------------------------------------

  private static BatchAnswers.SplitBatch split(Setup s, Request batch) {
    return BatchAnswers.splitBatch(
        batch, (Command.Batch) WireCodec.toCommand(batch), s.state::refusalBeforeLog);
  }

  private static byte[] snapshot(FencingState state) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    SnapshotStore.writeTo(state.image(), out);
    return out.toByteArray();
  }

  private static Request batch(List<Request> requests) {
    return Request.newBuilder()
        .setCaller(CALLER)
        .setBatch(BatchRequest.newBuilder().addAllRequests(requests))
        .build();
  }

  private static Request acquire(String resource, long ttlMs) {
    return Request.newBuilder()
        .setAcquire(AcquireRequest.newBuilder().setResource(resource).setOwner("X").setTtlMs(ttlMs))
        .build();
  }

  private static Request renew(String resource, long token) {
    return Request.newBuilder()
        .setRenew(RenewRequest.newBuilder().setResource(resource).setToken(token))
        .build();
  }

  private static Request release(String resource, long token) {
    return Request.newBuilder()
        .setRelease(ReleaseRequest.newBuilder().setResource(resource).setToken(token))
        .build();
  }

  private static Request write(String resource, long token, String key, String value) {
    return Request.newBuilder()
        .setWrite(
            WriteRequest.newBuilder()
                .setResource(resource)
                .setToken(token)
                .addWrites(
                    KeyWrite.newBuilder().setKey(key).setValue(ByteString.copyFromUtf8(value))))
        .build();
  }
}
