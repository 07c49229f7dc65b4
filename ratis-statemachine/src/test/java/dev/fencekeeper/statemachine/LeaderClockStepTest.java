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
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.statemachine.TransactionContext;
import org.junit.jupiter.api.Test;

/**
 * The leader's stamps follow its monotonic clock from the takeover, so a step of its wall clock
 * moves no lease deadline. Wall and monotonic clocks are fakes the test moves by hand.
 */
class LeaderClockStepTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final long MS = 1_000_000L;
  private long wallMs = T0;
  private long monotonicNanos = 42 * MS;
  private final FencingStateMachine leader =
      new FencingStateMachine(Limits.defaults(), () -> wallMs, () -> monotonicNanos);
  private final AsClientPort port = new AsClientPort(leader);
  private long index;

  // Guarantee: a wall-clock step of +30 s and then -60 s on the leader while a holder renews its
  // 10 s lease moves no stamp off the monotonic time line by more than the slew bound: every
  // renewal is RENEWED, each deadline is the renewal's stamp plus the TTL, and the expiry ticker's
  // clock sees no lease due early.
  @Test
  void wallClockStepsOnTheLeaderMoveNoDeadline() {
    leader.notifyLeaderReady();
    Response grant = submit(acquire("r", 10_000));
    assertThat(grant.getCode()).isEqualTo(ResultCode.GRANTED);
    long token = grant.getToken();

    for (long step : List.of(30_000L, -60_000L, 0L)) {
      monotonicNanos += 2_000 * MS;
      long elapsedMs = (monotonicNanos - 42 * MS) / MS;
      wallMs = T0 + elapsedMs + step;
      long slewMs = elapsedMs * LeaderClock.SLEW_PPM / 1_000_000 + 1;
      assertThat(leader.leaderTimeMs())
          .as("step %d", step)
          .isBetween(T0 + elapsedMs - slewMs, T0 + elapsedMs + slewMs);
      assertThat(leader.leaderTimeMs()).isLessThan(leader.nextExpiryMs());

      TransactionContext renew = start(renew("r", token));
      long stamp = stampOf(renew);
      assertThat(stamp)
          .as("stamp after a wall step of %d ms", step)
          .isBetween(T0 + elapsedMs - slewMs, T0 + elapsedMs + slewMs);
      Response renewed = commit(renew);
      assertThat(renewed.getCode())
          .as("renewal after a wall step of %d ms", step)
          .isEqualTo(ResultCode.RENEWED);
      assertThat(renewed.getExpiresAtMs()).isEqualTo(stamp + 10_000);
    }
  }

  // Guarantee: a node taking over continues the replicated time line by its monotonic clock since
  // it applied the last stamp (the election counts), whatever its wall clock says: 5 s or 30 s
  // behind, it does not freeze time; 30 s ahead, it does not jump every deadline forward.
  @Test
  void takeoverContinuesTheReplicatedTimeWhateverTheWallClock() {
    leader.notifyLeaderReady();
    commit(start(acquire("r", 10_000)));
    long appliedAt = monotonicNanos;
    long replicated = leader.read(FencingState::nowMs);
    leader.notifyNotLeader(List.of());

    for (long offset : List.of(-5_000L, 30_000L, -30_000L)) {
      monotonicNanos += 1_500 * MS; // the election
      wallMs = replicated + (monotonicNanos - appliedAt) / MS + offset;
      leader.notifyLeaderReady();
      monotonicNanos += 100 * MS;
      long continued = replicated + (monotonicNanos - appliedAt) / MS;
      // 100 ms of slew at 500 ppm moves the line by 0.05 ms: within the millisecond it rounds to.
      assertThat(leader.leaderTimeMs())
          .as("wall %+d ms", offset)
          .isBetween(continued - 1, continued);
      leader.notifyNotLeader(List.of());
    }
  }

  // Guarantee: an entry Ratis admits between this node's leadership becoming ready and the
  // takeover's anchor continues the replicated line too, not the node's wall clock 30 s ahead; the
  // anchor that follows keeps that line.
  @Test
  void anEntryAdmittedBeforeTheAnchorContinuesTheLine() {
    leader.notifyLeaderReady();
    commit(start(acquire("r", 10_000)));
    long replicated = leader.read(FencingState::nowMs);
    leader.notifyNotLeader(List.of());

    monotonicNanos += 1_000 * MS;
    wallMs = replicated + 1_000 + 30_000;
    TransactionContext early = start(acquire("s", 10_000));
    assertThat(stampOf(early)).isBetween(replicated + 999, replicated + 1_000);
    leader.notifyLeaderReady();
    assertThat(leader.leaderTimeMs()).isBetween(replicated + 999, replicated + 1_000);
  }

  // Guarantee: a leader whose wall clock is off the time line slews toward it at no more than
  // SLEW_PPM, never faster, and once there follows it; the line never runs backwards.
  @Test
  void theLineSlewsTowardTheWallClockWithinTheBound() {
    leader.notifyLeaderReady();
    commit(start(acquire("r", 10_000)));
    long replicated = leader.read(FencingState::nowMs);
    leader.notifyNotLeader(List.of());

    long wallAhead = 30_000;
    wallMs = replicated + wallAhead;
    leader.notifyLeaderReady();
    long previous = leader.leaderTimeMs();
    long elapsedMs = 0;
    for (int second = 1; second <= 200_000; second++) {
      monotonicNanos += 1_000 * MS;
      wallMs += 1_000;
      elapsedMs += 1_000;
      long now = leader.leaderTimeMs();
      assertThat(now - previous).as("second %d", second).isBetween(1_000L, 1_001L);
      assertThat(now).isLessThanOrEqualTo(replicated + elapsedMs + elapsedMs * 500 / 1_000_000);
      previous = now;
    }
    // 200,000 s at 500 ppm is 100 s of slew: more than the 30 s gap, so the line is on wall time.
    assertThat(leader.leaderTimeMs()).isEqualTo(wallMs);
    assertThat(leader.wallAheadOfTimeLineMs()).isZero();

    wallMs -= 60_000;
    for (int second = 1; second <= 10; second++) {
      monotonicNanos += 1_000 * MS;
      wallMs += 1_000;
      long now = leader.leaderTimeMs();
      assertThat(now - previous).as("after a step back, second %d", second).isBetween(999L, 1_000L);
      previous = now;
    }
  }

  // Guarantee: a follower reports how far its wall clock is ahead of the replicated time: the
  // newest stamp it applied, advanced by the monotonic time since.
  @Test
  void aFollowerMeasuresItsWallClockAgainstTheAppliedStamps() {
    FencingStateMachine follower =
        new FencingStateMachine(Limits.defaults(), () -> wallMs + 30_000, () -> monotonicNanos);
    assertThat(follower.wallAheadOfTimeLineMs()).isNull();
    leader.notifyLeaderReady();
    TransactionContext trx = start(acquire("r", 10_000));
    LogEntryProto entry = trx.initLogEntry(1, ++index);
    follower
        .applyTransaction(
            TransactionContext.newBuilder()
                .setStateMachine(follower)
                .setServerRole(RaftPeerRole.FOLLOWER)
                .setLogEntry(entry)
                .build())
        .join();
    monotonicNanos += 5_000 * MS;
    wallMs += 5_000;
    assertThat(follower.wallAheadOfTimeLineMs()).isEqualTo(30_000L);
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

  /** The leader stamps a command its client port submits. */
  private TransactionContext start(Request request) {
    return port.start(request);
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
