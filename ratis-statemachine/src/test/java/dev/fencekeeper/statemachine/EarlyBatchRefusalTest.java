package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fencekeeper.client.wire.LeaderRejection;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.Overload;
import dev.fencekeeper.core.Code;
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
import dev.fencekeeper.statemachine.proto.AnsweredEarly;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import java.io.IOException;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * Stale writes inside a batch, through the real Ratis adapter on a leader and a follower (no
 * servers): the leader refuses them in {@code startTransaction} as it refuses a lone one, logs only
 * the other commands, and every replica answers the whole batch alike.
 */
@Timeout(30)
class EarlyBatchRefusalTest {
  private static final long T0 = 1_700_000_000_000L;
  private final RaftGroupId group = RaftGroupId.randomId();
  private final ClientId clientId = ClientId.randomId();
  private final ListAppender<ILoggingEvent> rejectionLines = new ListAppender<>();
  private final Logger rejectionLogger = (Logger) LoggerFactory.getLogger(RejectionLog.LOGGER);
  private final NodeMetrics leaderMetrics = NodeMetrics.create("early-leader-" + System.nanoTime());
  private final NodeMetrics followerMetrics =
      NodeMetrics.create("early-follower-" + System.nanoTime());
  private long clock = T0;
  private final FencingStateMachine leader =
      new FencingStateMachine(Limits.defaults(), () -> clock);
  private final FencingStateMachine follower = new FencingStateMachine(Limits.defaults(), () -> T0);
  private long index;
  private long callId;
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

  // Guarantee: the stale writes and the malformed command of a batch are not logged; the entry
  // carries the
  // other commands in the client's order; the leader (with its local context) and a follower
  // (without)
  // answer the whole batch identically, each refused command with byte for byte its lone answer;
  // and the
  // replicas end in the same state.
  @Test
  void staleWritesInABatchAreAnsweredAsAloneAndOnlyTheOthersAreLogged() throws IOException {
    Request late = write(stale, "k", "late");
    Request lateToo = write(stale, "k2", "late");
    Request malformed = acquire("bad", 1); // below the minimum TTL
    Response lateAlone = refusedAlone(late);
    Response lateTooAlone = refusedAlone(lateToo);
    Response malformedAlone = refusedAlone(malformed);
    List<Request> requests =
        List.of(
            acquire("fresh", 5_000),
            late,
            renew(current),
            lateToo,
            write(current, "k", "now"),
            malformed,
            release("other", other));

    TransactionContext trx = start(batch(requests));

    assertThat(trx.getException()).isNull();
    assertThat(leader.pendingCommands())
        .as("pending-write slots: logged commands only")
        .isEqualTo(4);
    LoggedCommand logged =
        LoggedCommand.parseFrom(trx.getStateMachineLogEntry().getLogData().toByteArray());
    assertThat(Request.parseFrom(logged.getClientRequest()).getBatch().getRequestsList())
        .containsExactly(requests.get(0), requests.get(2), requests.get(4), requests.get(6));
    assertThat(logged.getAnsweredEarlyList())
        .extracting(AnsweredEarly::getPosition)
        .containsExactly(1, 3, 5);

    Response answer = commit(trx);

    assertThat(leader.pendingCommands()).isZero();
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
    assertThat(answer.getBatch(1)).isEqualTo(lateAlone);
    assertThat(answer.getBatch(3)).isEqualTo(lateTooAlone);
    assertThat(answer.getBatch(5)).isEqualTo(malformedAlone);
    assertThat(follower.digest()).isEqualTo(leader.digest());
  }

  // Guarantee: each early-refused write of a batch is counted among the rejected writes by reason
  // and
  // logged as a rejection exactly once, by the leader, as a lone early refusal is; followers, which
  // never
  // see it, count nothing.
  @Test
  void eachRefusedWriteIsCountedAndLoggedOnceByTheLeaderOnly() {
    commit(
        start(
            batch(
                List.of(
                    write(stale, "k", "late"),
                    renew(current),
                    write(stale, "k2", "late"),
                    acquire("bad", 1)))));

    assertThat(rejected(leaderMetrics, Code.STALE_TOKEN)).isEqualTo(2);
    assertThat(rejected(followerMetrics, Code.STALE_TOKEN)).isZero();
    assertThat(counter(leaderMetrics, NodeMetrics.REQUESTS_INVALID)).isEqualTo(1);
    assertThat(counter(followerMetrics, NodeMetrics.REQUESTS_INVALID)).isZero();
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
                .get(NodeMetrics.BATCH_COMMANDS)
                .getSnapshot()
                .getValues())
        .as("commands per logged batch")
        .containsExactly(1);
  }

  // Guarantee: a batch whose every command is refused costs no log entry and is answered per
  // request,
  // each with its lone answer, in order; counted like lone refusals.
  @Test
  void aBatchOfRefusedCommandsOnlyIsAnsweredWithoutALogEntry() {
    Request late = write(stale, "k", "late");
    Request malformed = acquire("bad", 1);
    Response lateAlone = refusedAlone(late);
    Response malformedAlone = refusedAlone(malformed);
    long lateCounted = rejected(leaderMetrics, Code.STALE_TOKEN);

    TransactionContext trx = start(batch(List.of(late, malformed, late)));

    assertThat(trx.getException()).as("refused without a log entry").isNotNull();
    Response answer = LeaderRejection.decode(trx.getException()).orElseThrow();
    assertThat(answer.getCode()).isEqualTo(ResultCode.BATCH_ANSWERED);
    assertThat(answer.getBatchList()).containsExactly(lateAlone, malformedAlone, lateAlone);
    assertThat(leader.pendingCommands()).isZero();
    assertThat(rejected(leaderMetrics, Code.STALE_TOKEN)).isEqualTo(lateCounted + 2);
  }

  // Guarantee: when the leader already holds all the commands it may, the commands it would log are
  // answered OVERLOADED and the refused ones keep their own answers, each in its position.
  @Test
  void whenTheLeaderIsFullTheRefusedCommandsKeepTheirAnswersAndTheOthersAreOverloaded() {
    leader.setOverload(Overload.defaults().withMaxPendingWrites(2));
    Request late = write(stale, "k", "late");
    Response lateAlone = refusedAlone(late);
    TransactionContext filling = start(batch(List.of(renew(current), acquire("fresh", 5_000))));
    assertThat(filling.getException()).isNull();

    TransactionContext trx = start(batch(List.of(renew(current), late)));

    Response answer = LeaderRejection.decode(trx.getException()).orElseThrow();
    assertThat(answer.getBatchList())
        .extracting(Response::getCode)
        .containsExactly(ResultCode.OVERLOADED, ResultCode.STALE_TOKEN);
    assertThat(answer.getBatch(1)).isEqualTo(lateAlone);
    assertThat(counter(leaderMetrics, NodeMetrics.REQUESTS_OVERLOADED)).isEqualTo(1);
    commit(filling);
    assertThat(leader.pendingCommands()).isZero();
  }

  // Guarantee: the log is input too: an entry whose early answers cannot belong to what it carries
  // (a
  // position outside the batch, answers beside a lone command) is answered INVALID_ARGUMENT and
  // changes
  // nothing.
  @Test
  void anEntryWhoseEarlyAnswersDoNotFitWhatItCarriesChangesNothing() {
    String before = follower.digest().sha256();
    AnsweredEarly refused =
        AnsweredEarly.newBuilder()
            .setPosition(5)
            .setResponse(
                Response.newBuilder().setCode(ResultCode.STALE_TOKEN).build().toByteString())
            .build();

    Response outside =
        applyOnFollower(
            LoggedCommand.newBuilder()
                .setStampMs(T0 + 100)
                .setClientRequest(batch(List.of(renew(current))).toByteString())
                .addAnsweredEarly(refused)
                .build());
    Response besideALoneCommand =
        applyOnFollower(
            LoggedCommand.newBuilder()
                .setStampMs(T0 + 100)
                .setClientRequest(renew(current).toByteString())
                .addAnsweredEarly(refused.toBuilder().setPosition(0))
                .build());

    assertThat(outside.getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(besideALoneCommand.getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(follower.digest().sha256()).isEqualTo(before);
  }

  // ---------------------------------------------------------------------------------------------

  /** The answer {@code request} gets when sent alone: refused by the leader without a log entry. */
  private Response refusedAlone(Request request) {
    TransactionContext trx = start(request);
    assertThat(trx.getException()).as("%s refused alone", request).isNotNull();
    return LeaderRejection.decode(trx.getException()).orElseThrow();
  }

  /** Submits and, unless the leader refuses it, commits; the answer the client gets. */
  private Response submit(Request request) {
    TransactionContext trx = start(request);
    return trx.getException() != null
        ? LeaderRejection.decode(trx.getException()).orElseThrow()
        : commit(trx);
  }

  private TransactionContext start(Request request) {
    clock++;
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

  private Response applyOnFollower(LoggedCommand logged) {
    LogEntryProto entry =
        LogEntryProto.newBuilder()
            .setTerm(1)
            .setIndex(++index)
            .setStateMachineLogEntry(
                org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto.newBuilder()
                    .setLogData(UnsafeByteOperations.unsafeWrap(logged.toByteArray())))
            .build();
    return parse(
        follower
            .applyTransaction(
                TransactionContext.newBuilder()
                    .setStateMachine(follower)
                    .setServerRole(RaftPeerRole.FOLLOWER)
                    .setLogEntry(entry)
                    .build())
            .join());
  }

  private static Response parse(Message message) {
    try {
      return Response.parseFrom(message.getContent().asReadOnlyByteBuffer());
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static long rejected(NodeMetrics metrics, Code reason) {
    return counter(metrics, NodeMetrics.rejectedName(reason));
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
    return Request.newBuilder()
        .setWrite(
            WriteRequest.newBuilder()
                .setResource("report")
                .setToken(token)
                .addWrites(
                    KeyWrite.newBuilder().setKey(key).setValue(ByteString.copyFromUtf8(value))))
        .build();
  }
}
