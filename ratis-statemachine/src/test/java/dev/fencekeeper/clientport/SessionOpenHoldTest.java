package dev.fencekeeper.clientport;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.StreamLimits;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.SessionKeepAlive;
import dev.fencekeeper.proto.SessionOpen;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.statemachine.EventFeed;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCallStreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A session open that reaches a node in the middle of an election, against a node whose leadership
 * the test sets: held until the node is ready to lead or learns who leads, never longer than {@link
 * SessionCall#HOLD_MS}.
 */
@Timeout(30)
class SessionOpenHoldTest {
  private static final String LEADER_ADDRESS = "127.0.0.1:1";

  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final AtomicBoolean ready = new AtomicBoolean();
  private final AtomicBoolean followsAnother = new AtomicBoolean();
  private final AtomicBoolean elected = new AtomicBoolean();
  private final AtomicInteger renewals = new AtomicInteger();
  private final Out out = new Out();

  @AfterEach
  void stop() {
    timer.shutdownNow();
  }

  private final SessionCall.Node node =
      new SessionCall.Node() {
        @Override
        public boolean leaderReady() {
          return ready.get();
        }

        @Override
        public boolean followsAnother() {
          return followsAnother.get();
        }

        @Override
        public boolean elected() {
          return elected.get();
        }

        @Override
        public Response notLeader() {
          Response.Builder b = Response.newBuilder().setCode(ResultCode.NOT_LEADER);
          return followsAnother.get() ? b.setLeaderAddress(LEADER_ADDRESS).build() : b.build();
        }

        @Override
        public CompletableFuture<CommandQueue.Answer> submit(Request stamped) {
          renewals.incrementAndGet();
          return CompletableFuture.completedFuture(
              new CommandQueue.Answer(
                  Response.newBuilder().setCode(ResultCode.RENEWED).setRenewed(1).build(), 9));
        }
      };

  private final EventFeed feed =
      new EventFeed() {
        @Override
        public void setListener(Listener listener) {}

        @Override
        public void replay(
            long afterIndex,
            int afterSeq,
            Predicate<LeaseEvent> filter,
            Consumer<Replay> underLock) {
          underLock.accept(new Replay(false, 0, 7, List.of()));
        }

        @Override
        public long appliedIndex() {
          return 7;
        }
      };

  private SessionCall openSession() {
    SessionCall call =
        new SessionCall(
            node,
            feed,
            new EventHub(),
            new IdentityCounts(),
            new StreamLimits(10, 100),
            "tester",
            out,
            Runnable::run,
            timer);
    call.onNext(
        SessionRequest.newBuilder()
            .setOpen(SessionOpen.newBuilder().setSessionId("held-session-id-0123456789ab"))
            .build());
    // A client re-opening after a failover sends its keep-alive right behind the open.
    call.onNext(
        SessionRequest.newBuilder().setKeepAlive(SessionKeepAlive.newBuilder().setSeq(1)).build());
    return call;
  }

  // Guarantee: an open at a node elected but not yet ready (or knowing no leader) is opened there
  // the moment it is ready, not refused; the keep-alive sent behind it renews once, after the
  // `opened` answer.
  @Test
  void anOpenDuringAnElectionIsOpenedWhenTheNodeIsReady() throws Exception {
    openSession();
    assertThat(out.messages.poll(200, TimeUnit.MILLISECONDS)).as("held, not refused").isNull();
    assertThat(renewals).hasValue(0);

    ready.set(true);
    SessionResponse first = out.messages.poll(2, TimeUnit.SECONDS);
    assertThat(first).isNotNull();
    assertThat(first.hasOpened()).as("opened: %s", first).isTrue();
    SessionResponse second = out.messages.poll(2, TimeUnit.SECONDS);
    assertThat(second).isNotNull();
    assertThat(second.getKeepAlive().getSeq()).isEqualTo(1);
    assertThat(second.getKeepAlive().getCode()).isEqualTo(ResultCode.RENEWED);
    assertThat(renewals).hasValue(1);
  }

  // Guarantee: a held open is refused the moment the node follows a new leader, naming it, and
  // renews nothing.
  @Test
  void aHeldOpenIsSentToTheLeaderTheNodeLearns() throws Exception {
    openSession();
    assertThat(out.messages.poll(200, TimeUnit.MILLISECONDS)).isNull();

    followsAnother.set(true);
    SessionResponse refusal = out.messages.poll(2, TimeUnit.SECONDS);
    assertThat(refusal).isNotNull();
    assertThat(refusal.getError().getCode()).isEqualTo(ResultCode.NOT_LEADER);
    assertThat(refusal.getError().getLeaderAddress()).isEqualTo(LEADER_ADDRESS);
    assertThat(out.completed.await(2, TimeUnit.SECONDS)).isTrue();
    assertThat(renewals).hasValue(0);
  }

  // Guarantee: an open at an elected leader that does not get ready is held no longer than
  // HOLD_MS, and refused then, so the client tries elsewhere.
  @Test
  void anOpenIsHeldNoLongerThanTheHold() throws Exception {
    elected.set(true);
    long ms = refusedAfterMs();
    assertThat(ms).isGreaterThanOrEqualTo(SessionCall.HOLD_MS);
  }

  // Guarantee: a node that knows no leader and is not elected (an election under way, or a node
  // cut off from the majority) holds an open no longer than NO_LEADER_HOLD_MS.
  @Test
  void aNodeThatKnowsNoLeaderHoldsBriefly() throws Exception {
    long ms = refusedAfterMs();
    assertThat(ms)
        .isGreaterThanOrEqualTo(SessionCall.NO_LEADER_HOLD_MS)
        .isLessThan(SessionCall.HOLD_MS);
  }

  private long refusedAfterMs() throws Exception {
    long start = System.nanoTime();
    openSession();
    SessionResponse refusal = out.messages.poll(SessionCall.HOLD_MS + 2_000, TimeUnit.MILLISECONDS);
    long ms = (System.nanoTime() - start) / 1_000_000;
    assertThat(refusal).isNotNull();
    assertThat(refusal.getError().getCode()).isEqualTo(ResultCode.NOT_LEADER);
    assertThat(renewals).hasValue(0);
    return ms;
  }

  /** The server side of the stream: always ready, collecting what is sent. */
  private static final class Out extends ServerCallStreamObserver<SessionResponse> {
    final BlockingQueue<SessionResponse> messages = new LinkedBlockingQueue<>();
    final java.util.concurrent.CountDownLatch completed =
        new java.util.concurrent.CountDownLatch(1);

    @Override
    public void onNext(SessionResponse value) {
      messages.add(value);
    }

    @Override
    public void onError(Throwable t) {
      completed.countDown();
    }

    @Override
    public void onCompleted() {
      completed.countDown();
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public void setOnCancelHandler(Runnable onCancelHandler) {}

    @Override
    public void setCompression(String compression) {}

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void setOnReadyHandler(Runnable onReadyHandler) {}

    @Override
    public void disableAutoInboundFlowControl() {}

    @Override
    public void request(int count) {}

    @Override
    public void setMessageCompression(boolean enable) {}
  }
}
