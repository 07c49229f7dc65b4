package dev.fencekeeper.tools.drill;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.Consistency;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.KeepAliveAnswer;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.proto.WriteRequest;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client protocol through a leader's failure, on three node processes: a leader frozen with
 * SIGSTOP (its connections stay open and silent) and a leader killed with SIGKILL, each while a
 * session holds leases through it. Through both: no acknowledged write is lost, no write with a
 * superseded token is accepted (also one the frozen leader received before it woke), and the
 * session is back on the new leader within seconds with every lease it held. The frozen leader runs
 * first, so that the kill still leaves a majority.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(150)
class ClientProtocolFailoverTest {
  /**
   * Session leases' TTL: longer than a failover takes a client to notice and re-open its session (a
   * two-second answer timeout, an election, a redirect), so a lease ends only if the session failed
   * to come back with it.
   */
  private static final long TTL_MS = 15_000;

  private static final int LEASES = 10;

  /** From the fault until the session renews on the new leader. */
  private static final Duration BACK_WITHIN = Duration.ofSeconds(10);

  @TempDir static Path root;
  private DrillCluster cluster;
  private final Map<String, String> clientAddresses = new LinkedHashMap<>();
  private final Map<String, ManagedChannel> channels = new LinkedHashMap<>();

  @BeforeAll
  void start() throws InterruptedException {
    PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
    cluster = new DrillCluster(root, new DrillLog(quiet, System.nanoTime(), true));
    int base = LocalPorts.freeBasePort(3);
    List<PeerAddress> peers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      peers.add(new PeerAddress("n" + (i + 1), "127.0.0.1", base + i));
    }
    for (PeerAddress peer : peers) {
      cluster.define(peer, peers, null, 0);
      clientAddresses.put(peer.id(), "127.0.0.1:" + ClusterConfig.defaultClientPort(peer));
    }
    peers.forEach(p -> cluster.start(p.id()));
    awaitLeader(Duration.ofSeconds(60));
  }

  @AfterAll
  void stop() {
    channels.values().forEach(ManagedChannel::shutdownNow);
    if (cluster != null) {
      cluster.close();
    }
  }

  // ---------------------------------------------------------------------------------------------

  // Guarantee: a leader frozen while a session holds leases through it and a write with a token
  // is on its way to it: the session is back on the new leader within seconds with every lease;
  // the frozen leader, once it wakes, accepts neither that write nor any other with the
  // superseded token, and ends the session stream it still had (NOT_LEADER, or UNAVAILABLE for the
  // keep-alive it was given while frozen), naming the new leader when it knows it; every write
  // acknowledged before the freeze is still there.
  @Test
  @Order(1)
  void aFrozenLeaderAcceptsNoStaleWriteAndItsSessionsMove() throws Exception {
    awaitLeader(Duration.ofSeconds(30));
    ReopeningSession session = new ReopeningSession(this, "frozen-" + UUID.randomUUID());
    Map<String, Response> leases = holdLeases(session, "frozen-");
    Map<String, Response> writes = writeOnce(leases);
    Response stale = acquire("frozen-stale", 60_000, "", "frozen-stale-1");
    assertThat(write("frozen-stale", stale.getToken(), "old holder", "frozen-stale-w1").getCode())
        .isEqualTo(ResultCode.ACCEPTED);
    assertThat(session.keepAlive()).as(session.lastProblem()).isNotNull();
    ReopeningSession.Stream onFrozen = session.current();
    // The node that just renewed the session leads: leadership may have moved since the start.
    String frozen = idOf(onFrozen.address());

    cluster.pause(frozen);
    long frozenAt = System.nanoTime();
    CompletableFuture<Response> inFlight = new CompletableFuture<>();
    FencekeeperGrpc.newStub(channel(clientAddresses.get(frozen)))
        .withDeadlineAfter(60, TimeUnit.SECONDS)
        .write(writeRequest("frozen-stale", stale.getToken(), "frozen leader", ""), into(inFlight));

    try {
      sessionComesBack(session, frozen, frozenAt, leases);
      // The next holder, through the new leader.
      assertThat(call(s -> s.revoke(revoke("frozen-stale"))).getCode())
          .isEqualTo(ResultCode.REVOKED);
      Response next = acquire("frozen-stale", 60_000, "", "frozen-stale-2");
      assertThat(next.getToken()).isGreaterThan(stale.getToken());
      assertThat(write("frozen-stale", next.getToken(), "new holder", "frozen-stale-w2").getCode())
          .isEqualTo(ResultCode.ACCEPTED);
    } finally {
      cluster.resume(frozen);
    }

    Response late = answerOf(inFlight, Duration.ofSeconds(30));
    assertThat(late == null ? null : late.getCode())
        .as("the write the frozen leader received before it woke: %s", late)
        .isNotEqualTo(ResultCode.ACCEPTED);
    SessionResponse last = onFrozen.lastMessage(Duration.ofSeconds(20));
    assertThat(last.hasError())
        .as("the frozen leader's session stream ended with %s", last)
        .isTrue();
    assertThat(last.getError().getCode()).isIn(ResultCode.NOT_LEADER, ResultCode.UNAVAILABLE);
    assertThat(last.getError().getLeaderAddress()).isIn(session.current().address(), "");
    Response direct =
        blocking(clientAddresses.get(frozen))
            .write(writeRequest("frozen-stale", stale.getToken(), "woken leader", ""));
    assertThat(direct.getCode()).isIn(ResultCode.NOT_LEADER, ResultCode.STALE_TOKEN);
    Response viaLeader =
        call(s -> s.write(writeRequest("frozen-stale", stale.getToken(), "old holder", "")));
    assertThat(viaLeader.getCode()).isEqualTo(ResultCode.STALE_TOKEN);
    Response value = read("frozen-stale");
    assertThat(value.getValue().toStringUtf8()).isEqualTo("new holder");

    assertLeasesLive(leases);
    assertWritesKept(writes);
    session.close();
  }

  // Guarantee: a leader killed while a session holds leases through it: the session is back on
  // the new leader within seconds with every lease; every acknowledged write is still there; a
  // write with a token superseded after the kill is refused.
  @Test
  @Order(2)
  void aKilledLeaderLosesNoWriteAndItsSessionsComeBack() throws Exception {
    awaitLeader(Duration.ofSeconds(30));
    ReopeningSession session = new ReopeningSession(this, "killed-" + UUID.randomUUID());
    Map<String, Response> leases = holdLeases(session, "killed-");
    Map<String, Response> writes = writeOnce(leases);
    Response stale = acquire("killed-stale", 60_000, "", "killed-stale-1");
    assertThat(write("killed-stale", stale.getToken(), "old holder", "killed-stale-w1").getCode())
        .isEqualTo(ResultCode.ACCEPTED);

    assertThat(session.keepAlive()).as(session.lastProblem()).isNotNull();
    String killed = idOf(session.current().address());
    cluster.kill(killed);
    long killedAt = System.nanoTime();
    sessionComesBack(session, killed, killedAt, leases);

    assertLeasesLive(leases);
    assertWritesKept(writes);
    assertThat(call(s -> s.revoke(revoke("killed-stale"))).getCode()).isEqualTo(ResultCode.REVOKED);
    Response next = acquire("killed-stale", 60_000, "", "killed-stale-2");
    assertThat(write("killed-stale", next.getToken(), "new holder", "killed-stale-w2").getCode())
        .isEqualTo(ResultCode.ACCEPTED);
    Response refused =
        call(s -> s.write(writeRequest("killed-stale", stale.getToken(), "old holder", "")));
    assertThat(refused.getCode()).isEqualTo(ResultCode.STALE_TOKEN);
    assertThat(refused.getCurrentToken()).isEqualTo(next.getToken());
    assertThat(read("killed-stale").getValue().toStringUtf8()).isEqualTo("new holder");
    session.close();
  }

  // ---------------------------------------------------------------------------------------------

  /** Opens the session on the leader and acquires {@link #LEASES} leases through it. */
  private Map<String, Response> holdLeases(ReopeningSession session, String prefix)
      throws InterruptedException {
    assertThat(session.keepAlive()).as(session.lastProblem()).isNotNull();
    Map<String, Response> leases = new LinkedHashMap<>();
    for (int i = 0; i < LEASES; i++) {
      String resource = prefix + i;
      Response granted = acquire(resource, TTL_MS, session.id(), resource + "-acquire");
      assertThat(granted.getCode()).isEqualTo(ResultCode.GRANTED);
      leases.put(resource, granted);
    }
    KeepAliveAnswer renewed = session.keepAlive();
    assertThat(renewed).as(session.lastProblem()).isNotNull();
    assertThat(renewed.getRenewed()).isEqualTo(LEASES);
    return leases;
  }

  /** One acknowledged write under each lease: the answers, by resource. */
  private Map<String, Response> writeOnce(Map<String, Response> leases) {
    Map<String, Response> writes = new LinkedHashMap<>();
    leases.forEach(
        (resource, lease) -> {
          Response w = write(resource, lease.getToken(), "value of " + resource, resource + "-w");
          assertThat(w.getCode()).isEqualTo(ResultCode.ACCEPTED);
          writes.put(resource, w);
        });
    return writes;
  }

  /**
   * Keeps the session alive until it renews on a node other than {@code failed}, within {@link
   * #BACK_WITHIN} of the fault: that renewal extended every lease the session holds, each to the
   * renewal's time plus its TTL.
   */
  private void sessionComesBack(
      ReopeningSession session, String failed, long faultAt, Map<String, Response> leases)
      throws InterruptedException {
    long deadline = faultAt + BACK_WITHIN.toNanos();
    KeepAliveAnswer renewed = null;
    while (System.nanoTime() < deadline) {
      renewed = session.keepAlive();
      if (renewed != null && !session.current().address().equals(clientAddresses.get(failed))) {
        break;
      }
      renewed = null;
      Thread.sleep(100);
    }
    long tookMs = (System.nanoTime() - faultAt) / 1_000_000;
    System.out.printf(
        "session %s back %d ms after the fault on %s: %s%n",
        session.id(), tookMs, failed, renewed == null ? session.lastProblem() : renewed);
    assertThat(renewed).as("session back within %s (took %d ms)", BACK_WITHIN, tookMs).isNotNull();
    assertThat(renewed.getRenewed()).isEqualTo(LEASES);
    long renewedAt = renewed.getNowMs();
    leases.forEach(
        (resource, granted) -> {
          Response now =
              call(s -> s.getLease(LeaseQuery.newBuilder().setResource(resource).build()));
          assertThat(now.getLive()).as("%s still held: %s", resource, now).isTrue();
          assertThat(now.getToken()).isEqualTo(granted.getToken());
          assertThat(now.getExpiresAtMs())
              .as("%s renewed by the session on the new leader", resource)
              .isGreaterThanOrEqualTo(renewedAt + TTL_MS);
        });
  }

  private void assertLeasesLive(Map<String, Response> leases) {
    leases.forEach(
        (resource, granted) -> {
          Response now =
              call(s -> s.getLease(LeaseQuery.newBuilder().setResource(resource).build()));
          assertThat(now.getLive()).as("%s still held: %s", resource, now).isTrue();
          assertThat(now.getToken()).isEqualTo(granted.getToken());
        });
  }

  private void assertWritesKept(Map<String, Response> writes) {
    writes.forEach(
        (resource, acknowledged) -> {
          Response value = read(resource);
          assertThat(value.getCode()).as("%s: %s", resource, value).isEqualTo(ResultCode.FOUND);
          assertThat(value.getValue().toStringUtf8()).isEqualTo("value of " + resource);
          assertThat(value.getVersion()).isEqualTo(acknowledged.getVersion());
          assertThat(value.getAcceptedToken()).isEqualTo(acknowledged.getAcceptedToken());
        });
  }

  // ---------------------------------------------------------------------------------------------
  // Calls as a client makes them: to the leader, following NOT_LEADER's leader_address, retrying
  // what a failover left unanswered (with the same request ids).

  private Response acquire(String resource, long ttlMs, String sessionId, String requestId) {
    return call(
        s ->
            s.acquire(
                AcquireRequest.newBuilder()
                    .setResource(resource)
                    .setOwner("failover-test")
                    .setTtlMs(ttlMs)
                    .setSessionId(sessionId)
                    .setRequestId(requestId)
                    .build()));
  }

  private Response write(String resource, long token, String value, String requestId) {
    return call(s -> s.write(writeRequest(resource, token, value, requestId)));
  }

  private static WriteRequest writeRequest(
      String resource, long token, String value, String requestId) {
    return WriteRequest.newBuilder()
        .setResource(resource)
        .setToken(token)
        .setRequestId(requestId)
        .addWrites(KeyWrite.newBuilder().setKey("k").setValue(ByteString.copyFromUtf8(value)))
        .build();
  }

  private Response read(String resource) {
    return call(
        s ->
            s.read(
                ReadRequest.newBuilder()
                    .setResource(resource)
                    .setKey("k")
                    .setConsistency(Consistency.CONSISTENCY_LINEARIZABLE)
                    .build()));
  }

  private static RevokeRequest revoke(String resource) {
    return RevokeRequest.newBuilder().setResource(resource).setReason("failover test").build();
  }

  private String leaderHint;

  /** {@code op} on the leader, following redirects and retrying through a failover, up to 30 s. */
  Response call(Function<FencekeeperGrpc.FencekeeperBlockingStub, Response> op) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Response last = null;
    while (System.nanoTime() < deadline) {
      for (String address : candidates()) {
        try {
          last = op.apply(blocking(address).withDeadlineAfter(2, TimeUnit.SECONDS));
        } catch (StatusRuntimeException e) {
          forget(address);
          continue;
        }
        if (last.getCode() == ResultCode.NOT_LEADER || last.getCode() == ResultCode.UNAVAILABLE) {
          if (!last.getLeaderAddress().isEmpty()) {
            leaderHint = last.getLeaderAddress();
          }
          continue;
        }
        leaderHint = address;
        return last;
      }
      sleep(100);
    }
    throw new AssertionError("no leader answered within 30 s; last answer: " + last);
  }

  private String idOf(String clientAddress) {
    return clientAddresses.entrySet().stream()
        .filter(e -> e.getValue().equals(clientAddress))
        .map(Map.Entry::getKey)
        .findFirst()
        .orElseThrow();
  }

  /** A NOT_LEADER answer named the leader's client address. */
  void follow(String leaderAddress) {
    leaderHint = leaderAddress;
  }

  /** {@code address} did not answer as the leader: stop trying it first. */
  void forget(String address) {
    if (address.equals(leaderHint)) {
      leaderHint = null;
    }
  }

  /** Client addresses to try: the last known leader first, then every running node. */
  List<String> candidates() {
    List<String> all = new ArrayList<>();
    if (leaderHint != null) {
      all.add(leaderHint);
    }
    clientAddresses.forEach(
        (id, address) -> {
          if (cluster.isServing(id) && !all.contains(address)) {
            all.add(address);
          }
        });
    return all;
  }

  /** The leader by its own account, with the highest term among the serving nodes. */
  private String awaitLeader(Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      String leader = null;
      long term = -1;
      for (Map.Entry<String, String> node : clientAddresses.entrySet()) {
        if (!cluster.isServing(node.getKey())) {
          continue;
        }
        try {
          NodeInfo info =
              blocking(node.getValue())
                  .withDeadlineAfter(1, TimeUnit.SECONDS)
                  .nodeStatus(NodeInfoQuery.getDefaultInstance())
                  .getNode();
          if (info.getRole().equals("LEADER") && info.getTerm() > term) {
            leader = info.getId();
            term = info.getTerm();
          }
        } catch (StatusRuntimeException e) {
          // not serving yet
        }
      }
      if (leader != null) {
        leaderHint = clientAddresses.get(leader);
        return leader;
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no leader within " + within + "; node logs under " + root);
  }

  synchronized ManagedChannel channel(String address) {
    return channels.computeIfAbsent(
        address, a -> NettyChannelBuilder.forTarget(a).usePlaintext().build());
  }

  FencekeeperGrpc.FencekeeperBlockingStub blocking(String address) {
    return FencekeeperGrpc.newBlockingStub(channel(address))
        .withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  private static StreamObserver<Response> into(CompletableFuture<Response> answer) {
    return new StreamObserver<>() {
      @Override
      public void onNext(Response r) {
        answer.complete(r);
      }

      @Override
      public void onError(Throwable t) {
        answer.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {
        answer.complete(null);
      }
    };
  }

  /** The answer, or null when the call failed without one (a gRPC error); fails on a timeout. */
  private static Response answerOf(CompletableFuture<Response> call, Duration within)
      throws InterruptedException {
    try {
      return call.get(within.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      return null;
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("no answer within " + within);
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
