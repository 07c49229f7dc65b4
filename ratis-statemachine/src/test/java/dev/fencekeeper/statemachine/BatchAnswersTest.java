package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

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
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/**
 * A client's batch as apply answers it ({@link FencingState#applyBatch}, {@link
 * WireCodec#toBatchResponse}): one answer per request, in the client's order, each command judged
 * on its own, a stale or malformed one refused with the answer it gets alone and changing nothing.
 */
class BatchAnswersTest {
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

    /** {@code request} applied alone, as the next entry. */
    Response applyAlone(Request request) {
      return WireCodec.toResponse(apply(WireCodec.toCommand(request)));
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
        acquire("fresh", 5_000), // 0: GRANTED
        write("report", s.stale, "k", "late"), // 1: STALE_TOKEN
        renew("report", s.current), // 2: RENEWED
        write("report", s.current, "k", "now"), // 3: ACCEPTED
        write("report", s.stale, "k2", "late"), // 4: STALE_TOKEN
        release("other", s.other), // 5: RELEASED
        acquire("bad", 1), // 6: INVALID_ARGUMENT (ttl below the minimum)
        write("report", 999_999, "k", "never")); // 7: UNKNOWN_TOKEN, a token not yet issued
  }

  /** Positions of {@link #mixed} that are refused and change nothing. */
  private static final List<Integer> REFUSED = List.of(1, 4, 6, 7);

  // Guarantee: every command of a batch gets its own answer, in the client's order; the stale
  // writes are refused with the newest token and its holder, each with the answer it gets when
  // applied alone on the same state (code, tokens, holder, message; the time aside).
  @Test
  void eachCommandIsAnsweredInItsPositionAndStaleOnesAsAlone() {
    Setup s = new Setup();
    List<Request> requests = mixed(s);

    Response answer = s.applyBatch(batch(requests));

    assertThat(answer.getCode()).isEqualTo(ResultCode.BATCH_ANSWERED);
    assertThat(answer.getBatchList())
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
    assertThat(answer.getBatch(1).getSentToken()).isEqualTo(s.stale);
    assertThat(answer.getBatch(1).getCurrentToken()).isEqualTo(s.current);
    assertThat(answer.getBatch(1).getHolderOwner()).isEqualTo("B");
    for (int position : REFUSED) {
      Request alone = requests.get(position).toBuilder().setCaller(CALLER).build();
      Setup same = new Setup();
      if (position > 0) {
        same.applyBatch(batch(requests.subList(0, position))); // the state the command met
      }
      assertThat(withoutTime(same.applyAlone(alone)))
          .as("request %d alone", position)
          .isEqualTo(withoutTime(answer.getBatch(position)));
    }
  }

  // Guarantee: the refused commands of a batch change nothing: the state after the whole batch is
  // the state after a batch of only the others, and each of the others is answered byte for byte
  // as there.
  @Test
  void theRefusedCommandsChangeNothing() throws IOException {
    Setup whole = new Setup();
    Response everything = whole.applyBatch(batch(mixed(whole)));

    Setup others = new Setup();
    List<Request> accepted = new ArrayList<>();
    for (int i = 0; i < mixed(others).size(); i++) {
      if (!REFUSED.contains(i)) {
        accepted.add(mixed(others).get(i));
      }
    }
    Response applied = others.applyBatch(batch(accepted));

    int next = 0;
    for (int i = 0; i < everything.getBatchCount(); i++) {
      if (!REFUSED.contains(i)) {
        assertThat(everything.getBatch(i)).as("request %d", i).isEqualTo(applied.getBatch(next++));
      }
    }
    assertThat(snapshot(whole.state)).isEqualTo(snapshot(others.state));
  }

  // Guarantee: a batch whose every command is refused is still answered per request, in order,
  // at the entry's time, and changes nothing but the time.
  @Test
  void aBatchOfRefusedCommandsOnlyIsAnsweredPerRequest() {
    Setup s = new Setup();
    Setup untouched = new Setup();
    List<Request> requests =
        List.of(
            write("report", s.stale, "k", "a"),
            acquire("bad", 1),
            write("report", s.stale, "k", "b"));

    Response answer = s.applyBatch(batch(requests));

    assertThat(answer.getCode()).isEqualTo(ResultCode.BATCH_ANSWERED);
    assertThat(answer.getBatchList())
        .extracting(Response::getCode)
        .containsExactly(
            ResultCode.STALE_TOKEN, ResultCode.INVALID_ARGUMENT, ResultCode.STALE_TOKEN);
    assertThat(answer.getNowMs()).isEqualTo(s.state.nowMs());
    assertThat(resources(s.state)).isEqualTo(resources(untouched.state));
  }

  // Guarantee: whichever writes of a batch are stale, every answer lands at its own request's
  // position and only the current writes are applied, so the client can match answers to
  // requests by position.
  @Property
  void everyAnswerLandsAtItsOwnRequestsPosition(
      @ForAll @Size(min = 1, max = 40) List<Boolean> staleAt) {
    Setup s = new Setup();
    List<Request> requests = new ArrayList<>();
    for (int i = 0; i < staleAt.size(); i++) {
      requests.add(write("report", staleAt.get(i) ? s.stale : s.current, "k" + i, "v" + i));
    }

    Response answer = s.applyBatch(batch(requests));

    assertThat(answer.getBatchCount()).isEqualTo(requests.size());
    for (int i = 0; i < requests.size(); i++) {
      assertThat(answer.getBatch(i).getCode())
          .as("request %d", i)
          .isEqualTo(staleAt.get(i) ? ResultCode.STALE_TOKEN : ResultCode.ACCEPTED);
      assertThat(s.state.read("report", "k" + i).code())
          .as("key of request %d", i)
          .isEqualTo(staleAt.get(i) ? Code.NOT_FOUND : Code.FOUND);
    }
  }

  // ---------------------------------------------------------------------------------------------

  /** {@code answer} without its state-machine time, which moves with every entry applied. */
  private static Response withoutTime(Response answer) {
    return answer.toBuilder().clearNowMs().build();
  }

  /** Every resource in snapshot form: the state but its time. */
  private static List<ByteString> resources(FencingState state) {
    return state.image().resources().stream()
        .map(r -> SnapshotStore.toProto(r).toByteString())
        .toList();
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
