package dev.fencekeeper.clientport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.KeepAliveAnswer;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.SessionKeepAlive;
import dev.fencekeeper.proto.SessionOpen;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.server.RaftConfig;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import dev.fencekeeper.testing.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.thirdparty.io.grpc.Context;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client protocol's streams and long calls against a real three-node cluster: Watch, Acquire
 * with a wait, and Session. One cluster for the class; each test on resources and sessions of its
 * own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(180)
class ClientProtocolStreamsTest {
  static final Duration WITHIN = Duration.ofSeconds(10);

  @TempDir static Path dataDir;
  TestCluster cluster;
  Channels channels;
  String leader;
  String follower;
  FencekeeperGrpc.FencekeeperBlockingStub onLeader;
  FencekeeperGrpc.FencekeeperStub asyncOnLeader;

  @BeforeAll
  void start() {
    Properties p = new Properties();
    // Steady leadership on a loaded shared machine: these tests are about the client port.
    p.setProperty("raft.election.timeout.min", "2s");
    p.setProperty("raft.election.timeout.max", "4s");
    p.setProperty("lease.waiter-liveness", "3s");
    cluster = TestCluster.start(dataDir, p);
    channels = new Channels();
  }

  // Leadership may move between tests (a loaded machine): each test talks to the leader of its
  // time.
  @BeforeEach
  void findLeader() {
    leader = cluster.awaitLeader();
    follower = leader.equals("n1") ? "n2" : "n1";
    onLeader = channels.blocking(cluster.clientAddress(leader));
    asyncOnLeader = channels.async(cluster.clientAddress(leader));
  }

  @AfterAll
  void stop() {
    channels.close();
    cluster.close();
  }

  private Response acquire(String resource, long ttlMs, String sessionId) {
    return onLeader.acquire(
        AcquireRequest.newBuilder()
            .setResource(resource)
            .setOwner("tester")
            .setTtlMs(ttlMs)
            .setSessionId(sessionId)
            .build());
  }

  private long applied() {
    return onLeader.nodeStatus(NodeInfoQuery.getDefaultInstance()).getNode().getLastAppliedIndex();
  }

  private int waiters(String resource) {
    return onLeader
        .list(ListRequest.newBuilder().setPrefix(resource).build())
        .getEntriesList()
        .stream()
        .filter(e -> e.getResource().equals(resource))
        .mapToInt(e -> e.getWaiters())
        .sum();
  }

  private static List<LeaseEvent> events(List<Response> messages) {
    List<LeaseEvent> events = new ArrayList<>();
    messages.forEach(m -> events.addAll(m.getEventsList()));
    return events;
  }

  // ---------------------------------------------------------------------------------------------
  // Watch

  // Guarantee: a Watch stream carries a resource's events in commit order as they commit, after the
  // position it names; a second watch from an earlier position gets the same events replayed; a
  // prefix watch sees them too; a watch with a timeout ends by itself.
  @Test
  void watchStreamsEventsAsTheyCommit() throws Exception {
    long from = applied();
    Collector<Response> exact = new Collector<>();
    asyncOnLeader.watch(
        WatchRequest.newBuilder()
            .setResource("watched")
            .setAfterIndex(from)
            .setAfterSeq(Integer.MAX_VALUE)
            .build(),
        exact);
    Collector<Response> prefix = new Collector<>();
    asyncOnLeader.watch(
        WatchRequest.newBuilder()
            .setPrefix("watch")
            .setAfterIndex(from)
            .setAfterSeq(Integer.MAX_VALUE)
            .build(),
        prefix);
    Thread.sleep(200); // both registered before the events they should see
    Response granted = acquire("watched", 30_000, "");
    onLeader.release(
        ReleaseRequest.newBuilder().setResource("watched").setToken(granted.getToken()).build());
    List<LeaseEvent> seen =
        events(exact.until(m -> containsType(m, LeaseEvent.Type.RELEASED), WITHIN));
    assertThat(seen)
        .extracting(LeaseEvent::getType)
        .containsExactly(LeaseEvent.Type.ACQUIRED, LeaseEvent.Type.RELEASED);
    assertThat(seen).extracting(LeaseEvent::getToken).containsOnly(granted.getToken());
    assertThat(events(prefix.until(m -> containsType(m, LeaseEvent.Type.RELEASED), WITHIN)))
        .containsExactlyElementsOf(seen);

    Collector<Response> replayed = new Collector<>();
    asyncOnLeader.watch(
        WatchRequest.newBuilder()
            .setResource("watched")
            .setAfterIndex(from)
            .setAfterSeq(Integer.MAX_VALUE)
            .setTimeoutMs(500)
            .build(),
        replayed);
    assertThat(replayed.ended.get(WITHIN.toSeconds(), java.util.concurrent.TimeUnit.SECONDS))
        .isNull();
    assertThat(events(new ArrayList<>(replayed.messages))).containsExactlyElementsOf(seen);
  }

  private static boolean containsType(Response m, LeaseEvent.Type type) {
    return m.getEventsList().stream().anyMatch(e -> e.getType() == type);
  }

  // Guarantee: a watch from a position whose events this node no longer keeps is answered
  // COMPACTED, with the applied index to resume from, and the stream ends.
  @Test
  @Order(
      Integer
          .MAX_VALUE) // it restarts a node: last, so no other test sees the election it may cause
  void watchFromACompactedPositionIsToldSo() throws Exception {
    acquire("compacted", 30_000, "");
    cluster.snapshotAll();
    cluster.stopNode(follower);
    cluster.startNode(follower);
    Collector<Response> watch = new Collector<>();
    channels
        .async(cluster.clientAddress(follower))
        .watch(WatchRequest.newBuilder().setResource("compacted").setAfterIndex(1).build(), watch);
    Response compacted = watch.next(WITHIN);
    assertThat(compacted.getCode()).isEqualTo(ResultCode.COMPACTED);
    assertThat(compacted.getAppliedIndex()).isPositive();
    assertThat(watch.ended.get(WITHIN.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)).isNull();
    cluster.awaitLeader();
  }

  // ---------------------------------------------------------------------------------------------
  // Acquire with a wait

  private AcquireRequest waiting(String resource, String requestId, long waitMs) {
    return AcquireRequest.newBuilder()
        .setResource(resource)
        .setOwner("waiter")
        .setTtlMs(30_000)
        .setRequestId(requestId)
        .setWaitMs(waitMs)
        .build();
  }

  // Guarantee: an acquire that waits is answered GRANTED in one call when the holder releases, and
  // stays queued meanwhile however long the liveness window is (the node re-sends it).
  @Test
  void aWaitingAcquireIsAnsweredWhenGranted() throws Exception {
    Response holder = acquire("queue", 30_000, "");
    Collector<Response> waiter = new Collector<>();
    asyncOnLeader.acquire(waiting("queue", "waiter-1", 20_000), waiter);
    await().atMost(WITHIN).until(() -> waiters("queue") == 1);
    Thread.sleep(4_000); // longer than lease.waiter-liveness (3 s): alive only through re-sends
    assertThat(waiter.messages).isEmpty();
    onLeader.release(
        ReleaseRequest.newBuilder().setResource("queue").setToken(holder.getToken()).build());
    Response granted = waiter.next(WITHIN);
    assertThat(granted.getCode()).isEqualTo(ResultCode.GRANTED);
    assertThat(granted.getToken()).isGreaterThan(holder.getToken());
    assertThat(onLeader.getLease(LeaseQuery.newBuilder().setResource("queue").build()).getToken())
        .isEqualTo(granted.getToken());
  }

  // Guarantee: when the wait ends, the call is answered with the last WAITING answer and the place
  // in line is given up; an acquire that waits without a request id is refused.
  @Test
  void aWaitThatEndsLeavesTheLine() throws Exception {
    acquire("queue-timeout", 30_000, "");
    Response ended = onLeader.acquire(waiting("queue-timeout", "waiter-2", 700));
    assertThat(ended.getCode()).isEqualTo(ResultCode.WAITING);
    assertThat(ended.getMessage()).contains("no longer queued");
    assertThat(waiters("queue-timeout")).isZero();
    assertThat(onLeader.acquire(waiting("queue-timeout", "", 700)).getCode())
        .isEqualTo(ResultCode.INVALID_ARGUMENT);
  }

  // Guarantee: a caller that cancels its waiting acquire gives up its place in line.
  @Test
  void aCancelledWaitLeavesTheLine() throws Exception {
    acquire("queue-cancel", 30_000, "");
    Context.CancellableContext call = Context.current().withCancellation();
    Collector<Response> waiter = new Collector<>();
    call.run(() -> asyncOnLeader.acquire(waiting("queue-cancel", "waiter-3", 30_000), waiter));
    await().atMost(WITHIN).until(() -> waiters("queue-cancel") == 1);
    call.cancel(null);
    await().atMost(WITHIN).until(() -> waiters("queue-cancel") == 0);
  }

  // ---------------------------------------------------------------------------------------------
  // Sessions

  private static SessionRequest open(String sessionId, long afterIndex, int afterSeq) {
    return SessionRequest.newBuilder()
        .setOpen(
            SessionOpen.newBuilder()
                .setSessionId(sessionId)
                .setOwner("tester")
                .setAfterIndex(afterIndex)
                .setAfterSeq(afterSeq))
        .build();
  }

  private static SessionRequest keepAlive(long seq) {
    return SessionRequest.newBuilder()
        .setKeepAlive(SessionKeepAlive.newBuilder().setSeq(seq))
        .build();
  }

  private record Session(StreamObserver<SessionRequest> in, Collector<SessionResponse> out) {}

  private Session openSession(
      FencekeeperGrpc.FencekeeperStub stub, String id, long afterIndex, int afterSeq) {
    Collector<SessionResponse> out = new Collector<>();
    StreamObserver<SessionRequest> in = stub.session(out);
    in.onNext(open(id, afterIndex, afterSeq));
    return new Session(in, out);
  }

  private static KeepAliveAnswer answerTo(Session s, long seq) throws InterruptedException {
    List<SessionResponse> seen =
        s.out().until(m -> m.hasKeepAlive() && m.getKeepAlive().getSeq() == seq, WITHIN);
    return seen.get(seen.size() - 1).getKeepAlive();
  }

  // Guarantee: a keep-alive renews every lease of its session, each by its own TTL, with one log
  // entry however many there are: 10,000 leases, one RenewSession entry, renewed = 10,000.
  @Test
  void oneEntryPerKeepAliveRenewsTenThousandLeases() throws Exception {
    String id = "session-10k-abcdefghijk";
    Session s = openSession(asyncOnLeader, id, 0, 0);
    assertThat(s.out().next(WITHIN).hasOpened()).isTrue();
    int leases = 10_000;
    for (int from = 0; from < leases; from += 256) {
      BatchRequest.Builder batch = BatchRequest.newBuilder();
      for (int i = from; i < Math.min(leases, from + 256); i++) {
        batch.addRequests(
            Request.newBuilder()
                .setAcquire(
                    AcquireRequest.newBuilder()
                        .setResource("many-" + i)
                        .setOwner("many")
                        .setTtlMs(60_000)
                        .setSessionId(id)));
      }
      assertThat(onLeader.batch(batch.build()).getBatchList())
          .extracting(Response::getCode)
          .containsOnly(ResultCode.GRANTED);
    }
    Response before = onLeader.getLease(LeaseQuery.newBuilder().setResource("many-0").build());
    long fromIndex = cluster.lastApplied(leader);
    s.in().onNext(keepAlive(1));
    KeepAliveAnswer answer = answerTo(s, 1);
    assertThat(answer.getCode()).isEqualTo(ResultCode.RENEWED);
    assertThat(answer.getRenewed()).isEqualTo(leases);
    assertThat(renewalEntries(fromIndex, answer.getAppliedIndex())).isEqualTo(1);
    Response after = onLeader.getLease(LeaseQuery.newBuilder().setResource("many-0").build());
    assertThat(after.getExpiresAtMs()).isGreaterThan(before.getExpiresAtMs());
    assertThat(after.getExpiresAtMs()).isEqualTo(answer.getNowMs() + 60_000);
    s.in().onCompleted();
  }

  /** Log entries in (from, to] that renew a lease: session renewals or renews, in any batch. */
  private int renewalEntries(long from, long to) throws IOException {
    RaftLog log =
        cluster
            .node(leader)
            .raftServer()
            .getDivision(RaftConfig.groupId(cluster.config()))
            .getRaftLog();
    int found = 0;
    for (long i = from + 1; i <= to; i++) {
      LogEntryProto entry = log.get(i);
      if (entry == null || !entry.hasStateMachineLogEntry()) {
        continue;
      }
      LoggedCommand logged = LoggedCommand.parseFrom(entry.getStateMachineLogEntry().getLogData());
      if (!logged.hasClientRequest()) {
        continue;
      }
      Request r = Request.parseFrom(logged.getClientRequest());
      List<Request> all = r.hasBatch() ? r.getBatch().getRequestsList() : List.of(r);
      if (all.stream().anyMatch(x -> x.hasRenewSession() || x.hasRenew())) {
        found++;
      }
    }
    return found;
  }

  // Guarantee: the events of a session's leases reach its stream as they commit: a revoke within a
  // second; and every event up to a keep-alive answer's applied_index is sent before that answer.
  @Test
  void sessionStreamCarriesEventsBeforeTheAnswersThatFollowThem() throws Exception {
    String id = "session-events-abcdefg";
    Session s = openSession(asyncOnLeader, id, 0, 0);
    assertThat(s.out().next(WITHIN).hasOpened()).isTrue();
    Response lease = acquire("session-revoked", 30_000, id);
    long revokedAt = System.nanoTime();
    onLeader.revoke(RevokeRequest.newBuilder().setResource("session-revoked").build());
    List<SessionResponse> seen =
        s.out()
            .until(m -> m.hasEvent() && m.getEvent().getType() == LeaseEvent.Type.REVOKED, WITHIN);
    long tookMs = (System.nanoTime() - revokedAt) / 1_000_000;
    assertThat(tookMs).as("revoke reached the stream after %d ms", tookMs).isLessThan(1_000);
    assertThat(seen.get(0).getEvent().getType()).isEqualTo(LeaseEvent.Type.ACQUIRED);
    assertThat(seen.get(seen.size() - 1).getEvent().getToken()).isEqualTo(lease.getToken());
    assertThat(seen.get(seen.size() - 1).getEvent().getSessionId()).isEqualTo(id);

    // Leases granted and released while keep-alives are answered: each answer comes after every
    // event of its entry and of every entry before it.
    List<Long> tokens = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      tokens.add(acquire("session-order-" + i, 30_000, id).getToken());
    }
    // Each keep-alive right behind a release: its renewal's entry follows the release's closely.
    for (int i = 0; i < 20; i++) {
      onLeader.release(
          ReleaseRequest.newBuilder()
              .setResource("session-order-" + i)
              .setToken(tokens.get(i))
              .build());
      s.in().onNext(keepAlive(i + 1));
    }
    s.in().onNext(keepAlive(21));
    List<SessionResponse> all =
        new ArrayList<>(
            s.out().until(m -> m.hasKeepAlive() && m.getKeepAlive().getSeq() == 21, WITHIN));
    Thread.sleep(500); // anything still on its way, a late event included
    s.out().messages.drainTo(all);
    // Later events may overtake an answer; earlier ones never come after it.
    long answeredUpTo = 0;
    int answers = 0;
    for (SessionResponse m : all) {
      if (m.hasEvent()) {
        assertThat(m.getEvent().getIndex())
            .as("event %s after an answer at index %d", m.getEvent(), answeredUpTo)
            .isGreaterThan(answeredUpTo);
      } else if (m.hasKeepAlive()) {
        answers++;
        assertThat(m.getKeepAlive().getCode()).isEqualTo(ResultCode.RENEWED);
        answeredUpTo = Math.max(answeredUpTo, m.getKeepAlive().getAppliedIndex());
      }
    }
    assertThat(answers).isEqualTo(21);
    // Every release committed before the last answer was on the stream before it.
    long released =
        all.stream()
            .filter(m -> m.hasEvent() && m.getEvent().getType() == LeaseEvent.Type.RELEASED)
            .count();
    assertThat(released).isEqualTo(20);
    s.in().onCompleted();
  }

  // Guarantee: a session re-opened on a new stream resumes its events from the position the client
  // gives: an event committed while no stream was open is delivered.
  @Test
  void aReopenedSessionResumesFromItsPosition() throws Exception {
    String id = "session-reopen-abcdefg";
    Session first = openSession(asyncOnLeader, id, 0, 0);
    assertThat(first.out().next(WITHIN).hasOpened()).isTrue();
    acquire("session-reopened", 30_000, id);
    LeaseEvent acquired = first.out().next(WITHIN).getEvent();
    assertThat(acquired.getType()).isEqualTo(LeaseEvent.Type.ACQUIRED);
    first.in().onCompleted();
    first.out().ended.get(10, java.util.concurrent.TimeUnit.SECONDS);
    onLeader.revoke(RevokeRequest.newBuilder().setResource("session-reopened").build());

    Session second = openSession(asyncOnLeader, id, acquired.getIndex(), acquired.getSeq());
    assertThat(second.out().next(WITHIN).hasOpened()).isTrue();
    LeaseEvent missed = second.out().next(WITHIN).getEvent();
    assertThat(missed.getType()).isEqualTo(LeaseEvent.Type.REVOKED);
    assertThat(missed.getToken()).isEqualTo(acquired.getToken());
    second.in().onNext(keepAlive(7));
    assertThat(answerTo(second, 7).getCode()).isEqualTo(ResultCode.RENEWED);
    second.in().onCompleted();
  }

  // Guarantee: a session opened on a follower ends at once with NOT_LEADER naming the leader; a
  // malformed open or a keep-alive before the open ends the stream with INVALID_ARGUMENT.
  @Test
  void badOrMisplacedSessionsAreRefused() throws Exception {
    Session onFollower =
        openSession(channels.async(cluster.clientAddress(follower)), "session-follower-abc", 0, 0);
    Response redirect = onFollower.out().next(WITHIN).getError();
    assertThat(redirect.getCode()).isEqualTo(ResultCode.NOT_LEADER);
    assertThat(redirect.getLeaderAddress()).isEqualTo(cluster.clientAddress(leader));

    Session shortId = openSession(asyncOnLeader, "short", 0, 0);
    assertThat(shortId.out().next(WITHIN).getError().getCode())
        .isEqualTo(ResultCode.INVALID_ARGUMENT);

    Collector<SessionResponse> out = new Collector<>();
    StreamObserver<SessionRequest> in = asyncOnLeader.session(out);
    in.onNext(keepAlive(1));
    assertThat(out.next(WITHIN).getError().getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(out.ended.get(10, java.util.concurrent.TimeUnit.SECONDS)).isNull();
  }

  // Guarantee: a keep-alive with more except_tokens than allowed is answered INVALID_ARGUMENT and
  // renews nothing, and the stream goes on; a session message longer than the node's message bound
  // ends the stream before it is read (RESOURCE_EXHAUSTED, or CANCELLED once the stream's headers
  // are out), and renews nothing either.
  @Test
  void keepAlivesOverTheLimitsRenewNothing() throws Exception {
    String id = "session-limits-abcdefg";
    Session s = openSession(asyncOnLeader, id, 0, 0);
    assertThat(s.out().next(WITHIN).hasOpened()).isTrue();
    acquire("session-limits", 30_000, id);
    assertThat(s.out().next(WITHIN).getEvent().getType()).isEqualTo(LeaseEvent.Type.ACQUIRED);
    long expires = expiresAt("session-limits");

    SessionKeepAlive.Builder tooMany = SessionKeepAlive.newBuilder().setSeq(1);
    for (long t = 1; t <= 10_001; t++) {
      tooMany.addExceptTokens(t);
    }
    s.in().onNext(SessionRequest.newBuilder().setKeepAlive(tooMany).build());
    KeepAliveAnswer refused = answerTo(s, 1);
    assertThat(refused.getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(refused.getRenewed()).isZero();
    assertThat(expiresAt("session-limits")).isEqualTo(expires);
    s.in().onNext(keepAlive(2));
    assertThat(answerTo(s, 2).getCode()).isEqualTo(ResultCode.RENEWED);
    long renewed = expiresAt("session-limits");
    assertThat(renewed).isGreaterThan(expires);

    // Nine bytes a token: past the message bound, whatever the node's value limit.
    int tokens = cluster.config().limits().maxRequestMessageBytes() / 9 + 1;
    SessionKeepAlive.Builder oversize = SessionKeepAlive.newBuilder().setSeq(3);
    for (int i = 0; i < tokens; i++) {
      oversize.addExceptTokens(Long.MAX_VALUE - i);
    }
    s.in().onNext(SessionRequest.newBuilder().setKeepAlive(oversize).build());
    // The stream's headers are out already, so gRPC can only reset it: the client sees CANCELLED.
    Throwable ended = s.out().ended.get(10, java.util.concurrent.TimeUnit.SECONDS);
    org.apache.ratis.thirdparty.io.grpc.Status status =
        org.apache.ratis.thirdparty.io.grpc.Status.fromThrowable(ended);
    System.out.println("OVERSIZE-STREAM " + status);
    assertThat(status.getCode())
        .isIn(
            org.apache.ratis.thirdparty.io.grpc.Status.Code.RESOURCE_EXHAUSTED,
            org.apache.ratis.thirdparty.io.grpc.Status.Code.CANCELLED);
    assertThat(s.out().messages).noneMatch(SessionResponse::hasKeepAlive);
    assertThat(expiresAt("session-limits")).isEqualTo(renewed);
  }

  private long expiresAt(String resource) {
    return onLeader
        .getLease(LeaseQuery.newBuilder().setResource(resource).build())
        .getExpiresAtMs();
  }
}
