package dev.fencekeeper.clientport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.SessionOpen;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.proto.WriteRequest;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ClientCall;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a node's client port holds for a client, bounded: streams and sessions per identity,
 * messages queued for a client that does not read, pending commands and reads. Each bound answers
 * OVERLOADED, changes nothing, and slows nobody else. A cluster with small bounds for the class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(180)
class ClientProtocolBoundsTest {
  static final Duration WITHIN = Duration.ofSeconds(10);
  static final int WATCHES = 20;
  static final int SESSIONS = 3;
  static final int BUFFER = 100;

  @TempDir static Path dataDir;
  TestCluster cluster;
  Channels channels;
  String leader;
  FencekeeperGrpc.FencekeeperBlockingStub onLeader;

  @BeforeAll
  void start() {
    Properties p = new Properties();
    // Steady leadership on a loaded shared machine: these tests are about the client port.
    p.setProperty("raft.election.timeout.min", "2s");
    p.setProperty("raft.election.timeout.max", "4s");
    p.setProperty("limits.watches-per-client.max", Integer.toString(WATCHES));
    p.setProperty("limits.sessions-per-client.max", Integer.toString(SESSIONS));
    p.setProperty("limits.stream-buffer.max", Integer.toString(BUFFER));
    p.setProperty("overload.pending-writes.max", "64");
    p.setProperty("overload.pending-reads.max", "4");
    cluster = TestCluster.start(dataDir, p);
    channels = new Channels();
  }

  @BeforeEach
  void findLeader() {
    leader = cluster.awaitLeader();
    onLeader = channels.blocking(cluster.clientAddress(leader));
  }

  @AfterAll
  void stop() {
    channels.close();
    cluster.close();
  }

  /** How long a plain acquire takes now: what "nobody else slows" is measured by. */
  private long acquireMillis(String resource) {
    long start = System.nanoTime();
    Response r =
        onLeader.acquire(
            AcquireRequest.newBuilder().setResource(resource).setOwner("o").setTtlMs(5000).build());
    assertThat(r.getCode()).isEqualTo(ResultCode.GRANTED);
    return (System.nanoTime() - start) / 1_000_000;
  }

  // Guarantee: a client that opens a thousand Watch streams gets limits.watches-per-client.max of
  // them; every one beyond is answered OVERLOADED at once and ends; commands are not slowed.
  @Test
  void thousandsOfStreamsAreCutOffAndNothingElseSlows() throws Exception {
    ManagedChannel abuser = channels.newChannel(cluster.clientAddress(leader));
    FencekeeperGrpc.FencekeeperStub stub = FencekeeperGrpc.newStub(abuser);
    List<Collector<Response>> watches = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      Collector<Response> c = new Collector<>();
      stub.watch(
          WatchRequest.newBuilder()
              .setPrefix("abuse")
              .setAfterIndex(0)
              .setAfterSeq(Integer.MAX_VALUE)
              .build(),
          c);
      watches.add(c);
    }
    await()
        .atMost(WITHIN)
        .until(() -> watches.stream().filter(c -> c.ended.isDone()).count() == 1000 - WATCHES);
    long refused =
        watches.stream()
            .filter(c -> c.ended.isDone())
            .filter(
                c ->
                    c.messages.peek() != null
                        && c.messages.peek().getCode() == ResultCode.OVERLOADED)
            .count();
    assertThat(refused).isEqualTo(1000 - WATCHES);
    assertThat(acquireMillis("not-slowed-by-streams")).isLessThan(2_000);
    abuser.shutdownNow();
    // Their slots come back when the streams end.
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              Collector<Response> again = new Collector<>();
              channels
                  .async(cluster.clientAddress(leader))
                  .watch(
                      WatchRequest.newBuilder().setResource("again").setTimeoutMs(200).build(),
                      again);
              assertThat(again.ended.get(5, TimeUnit.SECONDS)).isNull();
              assertThat(again.messages).noneMatch(m -> m.getCode() == ResultCode.OVERLOADED);
            });
  }

  // Guarantee: a Watch whose client does not read is cut off once limits.stream-buffer.max
  // messages wait for it: its last message is OVERLOADED and the stream ends; meanwhile commands
  // and a reading watcher of the same events go on at their pace.
  @Test
  void aClientThatNeverReadsIsCutOff() throws Exception {
    // A tiny flow-control window: the node's transport soon stops taking messages for this call,
    // so they pile up in the node's queue for the stream.
    ManagedChannel slow =
        NettyChannelBuilder.forTarget(cluster.clientAddress(leader))
            .usePlaintext()
            .flowControlWindow(1024)
            .build();
    try {
      long from = cluster.lastApplied(leader);
      WatchRequest flood =
          WatchRequest.newBuilder()
              .setPrefix("flood-")
              .setAfterIndex(from)
              .setAfterSeq(Integer.MAX_VALUE)
              .setMaxEvents(1)
              .build();
      List<Response> received = java.util.Collections.synchronizedList(new ArrayList<>());
      CompletableFuture<Status> closed = new CompletableFuture<>();
      ClientCall<WatchRequest, Response> stuck =
          slow.newCall(FencekeeperGrpc.getWatchMethod(), CallOptions.DEFAULT);
      stuck.start(
          new ClientCall.Listener<>() {
            @Override
            public void onMessage(Response message) {
              received.add(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              closed.complete(status);
            }
          },
          new Metadata());
      stuck.sendMessage(flood);
      stuck.halfClose();
      stuck.request(1); // one message, then it reads no more
      Collector<Response> reader = new Collector<>();
      channels.async(cluster.clientAddress(leader)).watch(flood, reader);
      Thread.sleep(300);
      int events = 2048;
      for (int b = 0; b < events / 64; b++) {
        BatchRequest.Builder batch = BatchRequest.newBuilder();
        for (int i = 0; i < 64; i++) {
          batch.addRequests(
              Request.newBuilder()
                  .setAcquire(
                      AcquireRequest.newBuilder()
                          .setResource("flood-" + b + "-" + i)
                          .setOwner("flood")
                          .setTtlMs(30_000)));
        }
        assertThat(onLeader.batch(batch.build()).getBatchList())
            .extracting(Response::getCode)
            .containsOnly(ResultCode.GRANTED);
      }
      assertThat(acquireMillis("not-slowed-by-a-stuck-stream")).isLessThan(2_000);
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThat(reader.messages)
                      .as("the reading watcher's messages (ended: %s)", reader.ended.getNow(null))
                      .hasSize(events));
      stuck.request(Integer.MAX_VALUE); // now it reads what it was sent before the cut
      assertThat(closed.get(10, TimeUnit.SECONDS).isOk()).isTrue();
      assertThat(received.get(received.size() - 1).getCode()).isEqualTo(ResultCode.OVERLOADED);
      assertThat(received.get(received.size() - 1).getMessage())
          .contains("limits.stream-buffer.max");
      assertThat(received.size()).isLessThan(events);
    } finally {
      slow.shutdownNow();
    }
  }

  // Guarantee: an identity holds at most limits.sessions-per-client.max sessions; one more ends at
  // once with OVERLOADED, and a slot comes back when a session ends.
  @Test
  void sessionsPerIdentityAreBounded() throws Exception {
    FencekeeperGrpc.FencekeeperStub stub = channels.async(cluster.clientAddress(leader));
    List<StreamObserver<SessionRequest>> open = new ArrayList<>();
    List<Collector<SessionResponse>> outs = new ArrayList<>();
    for (int i = 0; i <= SESSIONS; i++) {
      Collector<SessionResponse> out = new Collector<>();
      StreamObserver<SessionRequest> in = stub.session(out);
      in.onNext(open("bounded-session-" + i + "-abcdef"));
      open.add(in);
      outs.add(out);
      SessionResponse first = out.next(WITHIN);
      if (i < SESSIONS) {
        assertThat(first.hasOpened()).as("session %d", i).isTrue();
      } else {
        assertThat(first.getError().getCode()).isEqualTo(ResultCode.OVERLOADED);
        assertThat(first.getError().getMessage()).contains("limits.sessions-per-client.max");
      }
    }
    open.get(0).onCompleted();
    outs.get(0).ended.get(10, TimeUnit.SECONDS);
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              Collector<SessionResponse> out = new Collector<>();
              StreamObserver<SessionRequest> in = stub.session(out);
              in.onNext(open("bounded-session-again-abc"));
              try {
                assertThat(out.next(WITHIN).hasOpened()).isTrue();
              } finally {
                in.onCompleted();
              }
            });
    for (int i = 1; i < SESSIONS; i++) {
      open.get(i).onCompleted();
    }
  }

  private static SessionRequest open(String id) {
    return SessionRequest.newBuilder().setOpen(SessionOpen.newBuilder().setSessionId(id)).build();
  }

  // Guarantee: commands beyond overload.pending-writes.max are answered OVERLOADED at once and not
  // applied; the others are applied as if alone.
  @Test
  void pendingCommandsBeyondTheBoundAreOverloaded() throws Exception {
    Response lease =
        onLeader.acquire(
            AcquireRequest.newBuilder().setResource("busy").setOwner("o").setTtlMs(60_000).build());
    FencekeeperGrpc.FencekeeperStub stub = channels.async(cluster.clientAddress(leader));
    List<Collector<Response>> writes = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      Collector<Response> c = new Collector<>();
      stub.write(
          WriteRequest.newBuilder()
              .setResource("busy")
              .setToken(lease.getToken())
              .addWrites(
                  KeyWrite.newBuilder().setKey("k").setValue(ByteString.copyFromUtf8("v" + i)))
              .build(),
          c);
      writes.add(c);
    }
    List<ResultCode> codes = new ArrayList<>();
    for (Collector<Response> c : writes) {
      codes.add(c.next(WITHIN).getCode());
    }
    assertThat(codes).containsOnly(ResultCode.ACCEPTED, ResultCode.OVERLOADED);
    long accepted = codes.stream().filter(c -> c == ResultCode.ACCEPTED).count();
    assertThat(accepted).isLessThan(400).isPositive();
    Response read = onLeader.read(ReadRequest.newBuilder().setResource("busy").setKey("k").build());
    assertThat(read.getVersion()).isEqualTo(accepted);
  }

  // Guarantee: reads beyond overload.pending-reads.max are answered OVERLOADED at once. With both
  // followers stopped no majority confirms a read index, so the first reads hold their slots for as
  // long as the leader still believes it leads (an election timeout): every read sent meanwhile
  // finds the slots taken, however fast the machine.
  @Test
  void readsBeyondTheBoundAreOverloaded() throws Exception {
    FencekeeperGrpc.FencekeeperStub stub = channels.async(cluster.clientAddress(leader));
    List<String> followers =
        cluster.running().keySet().stream().filter(id -> !id.equals(leader)).toList();
    List<ResultCode> codes = new ArrayList<>();
    try {
      followers.parallelStream().forEach(cluster::stopNode);
      List<Collector<Response>> reads = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        Collector<Response> c = new Collector<>();
        stub.read(ReadRequest.newBuilder().setResource("busy-reads").setKey("k").build(), c);
        reads.add(c);
      }
      for (Collector<Response> c : reads) {
        // A held read ends when Ratis gives up its read index (raft.server.read.timeout, 10 s).
        codes.add(c.next(Duration.ofSeconds(30)).getCode());
      }
    } finally {
      followers.forEach(cluster::startNode);
    }
    // The held reads end NOT_LEADER once the leader gives up; reads sent after that are refused
    // NOT_LEADER before they would take a slot.
    assertThat(codes).containsOnly(ResultCode.OVERLOADED, ResultCode.NOT_LEADER);
    assertThat(codes.stream().filter(c -> c == ResultCode.OVERLOADED).count())
        .isGreaterThanOrEqualTo(100);
  }

  // Guarantee: an identity holds at most limits.watches-per-client.max waiting acquires on a
  // node; one more is answered OVERLOADED at once and queues nothing.
  @Test
  void waitingAcquiresPerIdentityAreBounded() throws Exception {
    onLeader.acquire(
        AcquireRequest.newBuilder().setResource("crowded").setOwner("o").setTtlMs(60_000).build());
    FencekeeperGrpc.FencekeeperStub stub = channels.async(cluster.clientAddress(leader));
    org.apache.ratis.thirdparty.io.grpc.Context.CancellableContext calls =
        org.apache.ratis.thirdparty.io.grpc.Context.current().withCancellation();
    try {
      for (int i = 0; i < WATCHES; i++) {
        int n = i;
        calls.run(
            () ->
                stub.acquire(
                    AcquireRequest.newBuilder()
                        .setResource("crowded")
                        .setOwner("w")
                        .setTtlMs(5_000)
                        .setRequestId("crowd-" + n)
                        .setWaitMs(60_000)
                        .build(),
                    new Collector<>()));
      }
      await()
          .atMost(WITHIN)
          .until(
              () ->
                  onLeader
                          .list(
                              dev.fencekeeper.proto.ListRequest.newBuilder()
                                  .setPrefix("crowded")
                                  .build())
                          .getEntries(0)
                          .getWaiters()
                      == WATCHES);
      Response refused =
          onLeader.acquire(
              AcquireRequest.newBuilder()
                  .setResource("crowded")
                  .setOwner("w")
                  .setTtlMs(5_000)
                  .setRequestId("crowd-extra")
                  .setWaitMs(60_000)
                  .build());
      assertThat(refused.getCode()).isEqualTo(ResultCode.OVERLOADED);
    } finally {
      calls.cancel(null);
    }
  }
}
