package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import java.io.IOException;
import java.util.List;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.junit.jupiter.api.Test;

/**
 * The leader's stamps follow its monotonic clock from the takeover, so a step of its wall clock
 * moves no lease deadline. Wall and monotonic clocks are fakes the test moves by hand.
 */
class LeaderClockStepTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final long MS = 1_000_000L;
  private final RaftGroupId group = RaftGroupId.randomId();
  private final ClientId clientId = ClientId.randomId();
  private long wallMs = T0;
  private long monotonicNanos = 42 * MS;
  private final FencingStateMachine leader =
      new FencingStateMachine(Limits.defaults(), () -> wallMs, () -> monotonicNanos);
  private long index;
  private long callId;

  // Guarantee: a wall-clock step of +30 s and then -60 s on the leader while a holder renews its 10
  // s lease moves no stamp off the monotonic time line: every renewal is RENEWED, each deadline is
  // the last renewal's monotonic time plus the TTL, and the expiry ticker's clock sees no lease due
  // early.
  @Test
  void wallClockStepsOnTheLeaderMoveNoDeadline() {
    leader.notifyLeaderReady();
    Response grant = submit(acquire("r", 10_000));
    assertThat(grant.getCode()).isEqualTo(ResultCode.GRANTED);
    long token = grant.getToken();

    for (long step : List.of(30_000L, -60_000L, 0L)) {
      wallMs = T0 + step;
      monotonicNanos += 2_000 * MS;
      long elapsedMs = (monotonicNanos - 42 * MS) / MS;
      assertThat(leader.leaderTimeMs()).as("step %d", step).isEqualTo(T0 + elapsedMs);
      assertThat(leader.leaderTimeMs()).isLessThan(leader.nextExpiryMs());

      TransactionContext renew = start(renew("r", token));
      assertThat(stampOf(renew))
          .as("stamp after a wall step of %d ms", step)
          .isEqualTo(T0 + elapsedMs);
      Response renewed = commit(renew);
      assertThat(renewed.getCode())
          .as("renewal after a wall step of %d ms", step)
          .isEqualTo(ResultCode.RENEWED);
      assertThat(renewed.getExpiresAtMs()).isEqualTo(T0 + elapsedMs + 10_000);
    }
  }

  // Guarantee: a node taking over with a wall clock behind the replicated time continues from the
  // replicated time (it does not freeze time until its clock catches up); one whose clock is ahead
  // starts from its clock.
  @Test
  void takeoverAnchorsAtTheLaterOfWallClockAndReplicatedTime() {
    leader.notifyLeaderReady();
    commit(start(acquire("r", 10_000)));
    long replicated = leader.read(FencingState::nowMs);
    leader.notifyNotLeader(List.of());

    wallMs = replicated - 5_000; // this node's clock is 5 s behind the time its predecessor stamped
    leader.notifyLeaderReady();
    monotonicNanos += 100 * MS;
    assertThat(leader.leaderTimeMs()).isEqualTo(replicated + 100);
    leader.notifyNotLeader(List.of());

    wallMs = replicated + 5_000;
    leader.notifyLeaderReady();
    monotonicNanos += 100 * MS;
    assertThat(leader.leaderTimeMs()).isEqualTo(replicated + 5_100);
  }

  // Guarantee: not leading, the clock reads the wall clock as it is.
  @Test
  void notLeadingTheClockIsTheWallClock() {
    wallMs = T0 + 123;
    assertThat(leader.leaderTimeMs()).isEqualTo(T0 + 123);
    leader.notifyLeaderReady();
    leader.notifyNotLeader(List.of());
    wallMs = T0 + 456;
    assertThat(leader.leaderTimeMs()).isEqualTo(T0 + 456);
  }

  private TransactionContext start(Request request) {
    return leader.startTransaction(
        RaftClientRequest.newBuilder()
            .setClientId(clientId)
            .setServerId(RaftPeerId.valueOf("n1"))
            .setGroupId(group)
            .setCallId(++callId)
            .setMessage(Message.valueOf(UnsafeByteOperations.unsafeWrap(request.toByteArray())))
            .setType(RaftClientRequest.writeRequestType())
            .build());
  }

  private Response submit(Request request) {
    return commit(start(request));
  }

  private Response commit(TransactionContext trx) {
    assertThat(trx.getException()).isNull();
    trx.initLogEntry(1, ++index);
    return parse(leader.applyTransaction(trx).join());
  }

  private static long stampOf(TransactionContext trx) {
    try {
      return LoggedCommand.parseFrom(trx.getStateMachineLogEntry().getLogData().toByteArray())
          .getStampMs();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static Response parse(Message message) {
    try {
      return Response.parseFrom(message.getContent().asReadOnlyByteBuffer());
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static Request acquire(String resource, long ttlMs) {
    return Request.newBuilder()
        .setAcquire(
            AcquireRequest.newBuilder().setResource(resource).setOwner("holder").setTtlMs(ttlMs))
        .build();
  }

  private static Request renew(String resource, long token) {
    return Request.newBuilder()
        .setRenew(RenewRequest.newBuilder().setResource(resource).setToken(token))
        .build();
  }
}
