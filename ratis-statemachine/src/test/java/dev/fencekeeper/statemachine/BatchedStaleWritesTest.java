package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.Code;
import dev.fencekeeper.metrics.NodeMetric;
import dev.fencekeeper.metrics.NodeMetrics;
import dev.fencekeeper.metrics.RejectionLog;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.WriteRequest;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import java.io.IOException;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * Stale writes inside a batch, through the real Ratis adapter on a leader and a follower (no
 * servers): the leader logs the batch as its client port queued it, and every replica, in apply,
 * refuses each stale or malformed command with the answer it gets alone, applies the others in
 * order, and answers the whole batch alike.
 */
@Timeout(30)
class BatchedStaleWritesTest {
  private static final long T0 = 1_700_000_000_000L;
  private final ListAppender<ILoggingEvent> rejectionLines = new ListAppender<>();
  private final Logger rejectionLogger = (Logger) LoggerFactory.getLogger(RejectionLog.LOGGER);
  private final NodeMetrics leaderMetrics =
      NodeMetrics.create("batched-leader-" + System.nanoTime());
  private final NodeMetrics followerMetrics =
      NodeMetrics.create("batched-follower-" + System.nanoTime());
  private long clock = T0;
  private final FencingStateMachine leader =
      new FencingStateMachine(Limits.defaults(), () -> clock);
  private final FencingStateMachine follower = new FencingStateMachine(Limits.defaults(), () -> T0);
  private final AsClientPort port = new AsClientPort(leader);
  private long index;
  private long stale;
  private long current;
  private long other;

  @BeforeEach
  void leasesAndCapture() {
    leader.setMetrics(leaderMetrics);
    follower.setMetrics(followerMetrics);
    stale = submit(acquire("report", 60_000)).getToken();
    submit(
        Request.newBuilder()
            .setRelease(ReleaseRequest.newBuilder().setResource("report").setToken(stale))
            .build());
    current = submit(acquire("report", 60_000)).getToken();
    other = submit(acquire("other", 60_000)).getToken();
    assertThat(submit(write(current, "k", "v")).getCode()).isEqualTo(ResultCode.ACCEPTED);
    rejectionLines.start();
    rejectionLogger.addAppender(rejectionLines);
  }

  @AfterEach
  void close() {
    rejectionLogger.detachAppender(rejectionLines);
    leaderMetrics.close();
    followerMetrics.close();
  }

  // Guarantee: a batch with stale writes and a malformed command is logged whole, as the client
  // port queued it; the leader (with its local context) and a follower (without) answer it
  // identically,
  // each refused command with its lone answer (the same code, tokens, holder and message) in its
  // position, the others applied in the client's order; and the replicas end in the same state.
  @Test
  void staleWritesInABatchAreAnsweredAsAloneAndTheOthersApplied() throws IOException {
    Request late = write(stale, "k", "late");
    Request lateToo = write(stale, "k2", "late");
    Request malformed = acquire("bad", 1); // below the minimum TTL
    Response lateAlone = submit(late);
    Response lateTooAlone = submit(lateToo);
    Response malformedAlone = submit(malformed);
    List<Request> requests =
        List.of(
            acquire("fresh", 5_000),
            late,
            renew(current),
            lateToo,
            write(current, "k", "now"),
            malformed,
            release("other", other));
    Request batch = batch(requests);

    TransactionContext trx = start(batch);

    assertThat(trx.getException()).isNull();
    LoggedCommand logged =
        LoggedCommand.parseFrom(trx.getStateMachineLogEntry().getLogData().toByteArray());
    assertThat(logged.getClientRequest()).isEqualTo(batch.toByteString());
    assertThat(logged.getInnerCallers()).isTrue();

    Response answer = commit(trx);

    assertThat(answer.getBatchList())
        .extracting(Response::getCode)
        .containsExactly(
            ResultCode.GRANTED,
            ResultCode.STALE_TOKEN,
            ResultCode.RENEWED,
            ResultCode.STALE_TOKEN,
            ResultCode.ACCEPTED,
            ResultCode.INVALID_ARGUMENT,
            ResultCode.RELEASED);
    assertThat(withoutTime(answer.getBatch(1))).isEqualTo(withoutTime(lateAlone));
    // The renew before it in the batch moved the holder's expiry; everything else is as alone.
    assertThat(withoutTime(answer.getBatch(3)).toBuilder().clearExpiresAtMs().build())
        .isEqualTo(withoutTime(lateTooAlone).toBuilder().clearExpiresAtMs().build());
    assertThat(withoutTime(answer.getBatch(5))).isEqualTo(withoutTime(malformedAlone));
    assertThat(answer.getBatch(1).getSentToken()).isEqualTo(stale);
    assertThat(answer.getBatch(1).getCurrentToken()).isEqualTo(current);
    assertThat(follower.digest()).isEqualTo(leader.digest());
  }

  // Guarantee: each stale write of a batch is counted among the rejected writes by reason on every
  // replica, as it applies the entry, and logged as a rejection exactly once, by the leader.
  @Test
  void eachStaleWriteIsCountedByEveryReplicaAndLoggedOnceByTheLeader() {
    commit(
        start(
            batch(
                List.of(
                    write(stale, "k", "late"),
                    renew(current),
                    write(stale, "k2", "late"),
                    acquire("bad", 1)))));

    assertThat(rejected(leaderMetrics, Code.STALE_TOKEN)).isEqualTo(2);
    assertThat(rejected(followerMetrics, Code.STALE_TOKEN)).isEqualTo(2);
    assertThat(counter(leaderMetrics, NodeMetric.REQUESTS_INVALID.dropwizardName())).isEqualTo(1);
    assertThat(counter(followerMetrics, NodeMetric.REQUESTS_INVALID.dropwizardName())).isEqualTo(1);
    assertThat(rejectionLines.list)
        .extracting(ILoggingEvent::getFormattedMessage)
        .containsExactly(
            "write rejected resource=report key=k sentToken="
                + stale
                + " currentToken="
                + current
                + " holderOwner=X code=STALE_TOKEN",
            "write rejected resource=report key=k2 sentToken="
                + stale
                + " currentToken="
                + current
                + " holderOwner=X code=STALE_TOKEN");
    assertThat(
            leaderMetrics
                .registry()
                .getHistograms()
                .get(NodeMetric.BATCH_COMMANDS.dropwizardName())
                .getSnapshot()
                .getValues())
        .as("commands per logged batch")
        .containsExactly(4);
  }

  // Guarantee: a batch whose every command is refused changes nothing and is answered per request,
  // each with its lone answer, in order.
  @Test
  void aBatchOfRefusedCommandsOnlyChangesNothingAndIsAnsweredPerRequest() {
    Request late = write(stale, "k", "late");
    Request malformed = acquire("bad", 1);
    Response lateAlone = submit(late);
    Response malformedAlone = submit(malformed);
    String before = leader.read(s -> s.read("report", "k").toString());

    Response answer = submit(batch(List.of(late, malformed, late)));

    assertThat(answer.getCode()).isEqualTo(ResultCode.BATCH_ANSWERED);
    assertThat(answer.getBatchList())
        .extracting(BatchedStaleWritesTest::withoutTime)
        .containsExactly(
            withoutTime(lateAlone), withoutTime(malformedAlone), withoutTime(lateAlone));
    String after = leader.read(s -> s.read("report", "k").toString());
    assertThat(after).isEqualTo(before);
  }

  // Guarantee: a batch sent again with the same request ids (a client's retry, as a new entry)
  // changes nothing: its write is answered from its receipt (the first version, not applied twice),
  // and its stale write is refused again.
  @Test
  void aRetriedBatchWithRequestIdsGetsTheFirstAnswersAndChangesNothing() {
    Request batch =
        batch(
            List.of(
                write(current, "k", "again", "retry-1"), write(stale, "k2", "late", "retry-2")));

    Response first = submit(batch);
    Response retried = submit(batch);

    assertThat(first.getBatchList())
        .extracting(Response::getCode)
        .containsExactly(ResultCode.ACCEPTED, ResultCode.STALE_TOKEN);
    assertThat(retried.getBatch(0).getCode()).isEqualTo(ResultCode.ACCEPTED);
    assertThat(retried.getBatch(0).getMessage()).contains("already applied");
    assertThat(retried.getBatch(0).getVersion()).isEqualTo(first.getBatch(0).getVersion());
    assertThat(retried.getBatch(1).getCode()).isEqualTo(ResultCode.STALE_TOKEN);
    long version = leader.read(s -> s.read("report", "k").version());
    Code k2 = leader.read(s -> s.read("report", "k2").code());
    assertThat(version).as("k's version").isEqualTo(2);
    assertThat(k2).isEqualTo(Code.NOT_FOUND);
    assertThat(follower.digest()).isEqualTo(leader.digest());
  }

  // ---------------------------------------------------------------------------------------------

  /** {@code answer} without its state-machine time, which moves with every entry applied. */
  private static Response withoutTime(Response answer) {
    return answer.toBuilder().clearNowMs().build();
  }

  /** Submits and commits; the answer the client gets. */
  private Response submit(Request request) {
    return commit(start(request));
  }

  private TransactionContext start(Request request) {
    clock++;
    TransactionContext trx = port.start(request);
    assertThat(trx.getException()).isNull();
    return trx;
  }

  /**
   * Commits a started entry: the leader applies it with its own context, the follower the same
   * entry without one. Both must answer alike (a retry after a failover is answered from the
   * follower's retry cache); returns that answer.
   */
  private Response commit(TransactionContext trx) {
    LogEntryProto entry = trx.initLogEntry(1, ++index);
    Response onLeader = parse(leader.applyTransaction(trx).join());
    TransactionContext replicated =
        TransactionContext.newBuilder()
            .setStateMachine(follower)
            .setServerRole(RaftPeerRole.FOLLOWER)
            .setLogEntry(entry)
            .build();
    Response onFollower = parse(follower.applyTransaction(replicated).join());
    assertThat(onFollower).as("the follower's answer to entry %d", index).isEqualTo(onLeader);
    return onLeader;
  }

  private static Response parse(Message message) {
    try {
      return Response.parseFrom(message.getContent().asReadOnlyByteBuffer());
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static long rejected(NodeMetrics metrics, Code reason) {
    return counter(metrics, NodeMetric.WRITES_REJECTED.dropwizardName(List.of(reason.name())));
  }

  private static long counter(NodeMetrics metrics, String name) {
    return metrics.registry().getCounters().get(name).getCount();
  }

  private static Request batch(List<Request> requests) {
    return Request.newBuilder()
        .setBatch(BatchRequest.newBuilder().addAllRequests(requests))
        .build();
  }

  private static Request acquire(String resource, long ttlMs) {
    return Request.newBuilder()
        .setAcquire(AcquireRequest.newBuilder().setResource(resource).setOwner("X").setTtlMs(ttlMs))
        .build();
  }

  private static Request renew(long token) {
    return Request.newBuilder()
        .setRenew(RenewRequest.newBuilder().setResource("report").setToken(token))
        .build();
  }

  private static Request release(String resource, long token) {
    return Request.newBuilder()
        .setRelease(ReleaseRequest.newBuilder().setResource(resource).setToken(token))
        .build();
  }

  private static Request write(long token, String key, String value) {
    return write(token, key, value, "");
  }

  private static Request write(long token, String key, String value, String requestId) {
    return Request.newBuilder()
        .setWrite(
            WriteRequest.newBuilder()
                .setResource("report")
                .setToken(token)
                .setRequestId(requestId)
                .addWrites(
                    KeyWrite.newBuilder().setKey(key).setValue(ByteString.copyFromUtf8(value))))
        .build();
  }
}
