package dev.fencekeeper.clientport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.Consistency;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.ValidateRequest;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.proto.WriteRequest;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.CodedOutputStream;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client protocol's unary calls against a real three-node cluster: every call and the result
 * codes it can give, redirects from followers, stale reads on followers, the reserved group field
 * and bad input. One cluster for the class; each test on resources of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class ClientProtocolConformanceTest {
  @TempDir static Path dataDir;
  TestCluster cluster;
  Channels channels;
  String leader;
  FencekeeperGrpc.FencekeeperBlockingStub onLeader;
  FencekeeperGrpc.FencekeeperBlockingStub onFollower;
  String follower;

  @BeforeAll
  void start() {
    Properties p = new Properties();
    // Steady leadership on a loaded shared machine: these tests are about the client port.
    p.setProperty("raft.election.timeout.min", "2s");
    p.setProperty("raft.election.timeout.max", "4s");
    p.setProperty("limits.value.max-bytes", "65536");
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
    onFollower = channels.blocking(cluster.clientAddress(follower));
  }

  @AfterAll
  void stop() {
    channels.close();
    cluster.close();
  }

  private Response acquire(String resource, long ttlMs) {
    return onLeader.acquire(
        AcquireRequest.newBuilder()
            .setResource(resource)
            .setOwner("tester")
            .setTtlMs(ttlMs)
            .build());
  }

  private static WriteRequest write(String resource, long token, String key, String value) {
    return WriteRequest.newBuilder()
        .setResource(resource)
        .setToken(token)
        .addWrites(KeyWrite.newBuilder().setKey(key).setValue(ByteString.copyFromUtf8(value)))
        .build();
  }

  private static ReadRequest read(String resource, String key, Consistency consistency) {
    return ReadRequest.newBuilder()
        .setResource(resource)
        .setKey(key)
        .setConsistency(consistency)
        .build();
  }

  // Guarantee: every node reports itself, its client address among it, and the limits a client
  // sizes its requests by.
  @Test
  void everyNodeReportsItsClientAddress() {
    for (String id : List.of("n1", "n2", "n3")) {
      Response status =
          channels
              .blocking(cluster.clientAddress(id))
              .nodeStatus(NodeInfoQuery.getDefaultInstance());
      assertThat(status.getNode().getId()).isEqualTo(id);
      assertThat(status.getNode().getClientAddress()).isEqualTo(cluster.clientAddress(id));
      assertThat(status.getNode().getLimits().getMaxMessageBytes())
          .isEqualTo(cluster.config().limits().maxRequestMessageBytes());
    }
  }

  // Guarantee: the lease commands answer with the codes of their outcomes, through the leader.
  @Test
  void leaseCommandsAnswerTheirCodes() {
    Response granted = acquire("lease-codes", 30_000);
    assertThat(granted.getCode()).isEqualTo(ResultCode.GRANTED);
    assertThat(acquire("lease-codes", 30_000).getCode()).isEqualTo(ResultCode.HELD);
    long token = granted.getToken();
    assertThat(
            onLeader
                .renew(RenewRequest.newBuilder().setResource("lease-codes").setToken(token).build())
                .getCode())
        .isEqualTo(ResultCode.RENEWED);
    assertThat(
            onLeader
                .renew(
                    RenewRequest.newBuilder()
                        .setResource("lease-codes")
                        .setToken(token + 1000)
                        .build())
                .getCode())
        .isEqualTo(ResultCode.LEASE_LOST);
    assertThat(
            onLeader
                .release(
                    ReleaseRequest.newBuilder()
                        .setResource("lease-codes")
                        .setToken(token + 1000)
                        .build())
                .getCode())
        .isEqualTo(ResultCode.NOT_HOLDER);
    assertThat(
            onLeader
                .release(
                    ReleaseRequest.newBuilder().setResource("lease-codes").setToken(token).build())
                .getCode())
        .isEqualTo(ResultCode.RELEASED);
    assertThat(
            onLeader
                .cancelWait(
                    CancelWaitRequest.newBuilder()
                        .setResource("lease-codes")
                        .setRequestId("never-queued")
                        .build())
                .getCode())
        .isEqualTo(ResultCode.NOT_FOUND);
    assertThat(
            onLeader
                .revoke(RevokeRequest.newBuilder().setResource("lease-codes").build())
                .getCode())
        .isEqualTo(ResultCode.NOT_FOUND);
    Response again = acquire("lease-codes", 30_000);
    Response revoked =
        onLeader.revoke(
            RevokeRequest.newBuilder().setResource("lease-codes").setReason("test").build());
    assertThat(revoked.getCode()).isEqualTo(ResultCode.REVOKED);
    assertThat(revoked.getToken()).isEqualTo(again.getToken());
  }

  // Guarantee: a lease with a lock-delay that ends involuntarily keeps the resource from the next
  // acquire for that long: LOCK_DELAYED, with the end of the delay.
  @Test
  void lockDelayAnswersLockDelayed() {
    onLeader.acquire(
        AcquireRequest.newBuilder()
            .setResource("delayed")
            .setOwner("a")
            .setTtlMs(30_000)
            .setLockDelayMs(30_000)
            .build());
    onLeader.revoke(RevokeRequest.newBuilder().setResource("delayed").build());
    Response delayed = acquire("delayed", 5_000);
    assertThat(delayed.getCode()).isEqualTo(ResultCode.LOCK_DELAYED);
    assertThat(delayed.getExpiresAtMs()).isGreaterThan(delayed.getNowMs());
  }

  // Guarantee: fenced writes answer ACCEPTED, STALE_TOKEN, LEASE_EXPIRED and UNKNOWN_TOKEN as the
  // tokens stand; reads and validations see the value and the token that wrote it.
  @Test
  void writesReadsAndValidationsAnswerTheirCodes() throws Exception {
    Response first = acquire("values", 1000);
    assertThat(onLeader.write(write("values", first.getToken(), "k", "one")).getCode())
        .isEqualTo(ResultCode.ACCEPTED);
    Thread.sleep(1500);
    assertThat(onLeader.write(write("values", first.getToken(), "k", "late")).getCode())
        .isEqualTo(ResultCode.LEASE_EXPIRED);
    assertThat(
            onLeader
                .validate(
                    ValidateRequest.newBuilder()
                        .setResource("values")
                        .setToken(first.getToken())
                        .build())
                .getCode())
        .isEqualTo(ResultCode.EXPIRED);
    Response second = acquire("values", 30_000);
    assertThat(onLeader.write(write("values", first.getToken(), "k", "stale")).getCode())
        .isEqualTo(ResultCode.STALE_TOKEN);
    assertThat(onLeader.write(write("values", second.getToken() + 5000, "k", "x")).getCode())
        .isEqualTo(ResultCode.UNKNOWN_TOKEN);
    assertThat(
            onLeader
                .validate(
                    ValidateRequest.newBuilder()
                        .setResource("values")
                        .setToken(first.getToken())
                        .build())
                .getCode())
        .isEqualTo(ResultCode.STALE);
    assertThat(
            onLeader
                .validate(
                    ValidateRequest.newBuilder()
                        .setResource("values")
                        .setToken(second.getToken())
                        .build())
                .getCode())
        .isEqualTo(ResultCode.CURRENT);
    Response found = onLeader.read(read("values", "k", Consistency.CONSISTENCY_LINEARIZABLE));
    assertThat(found.getCode()).isEqualTo(ResultCode.FOUND);
    assertThat(found.getValue().toStringUtf8()).isEqualTo("one");
    assertThat(found.getAcceptedToken()).isEqualTo(first.getToken());
    assertThat(
            onLeader.read(read("values", "absent", Consistency.CONSISTENCY_LINEARIZABLE)).getCode())
        .isEqualTo(ResultCode.NOT_FOUND);
    Response lease = onLeader.getLease(LeaseQuery.newBuilder().setResource("values").build());
    assertThat(lease.getCode()).isEqualTo(ResultCode.FOUND);
    assertThat(lease.getToken()).isEqualTo(second.getToken());
    assertThat(onLeader.getLease(LeaseQuery.newBuilder().setResource("never").build()).getCode())
        .isEqualTo(ResultCode.NOT_FOUND);
    Response listed =
        onLeader.list(
            ListRequest.newBuilder().setWhat(ListRequest.What.KEYS).setResource("values").build());
    assertThat(listed.getCode()).isEqualTo(ResultCode.FOUND);
    assertThat(listed.getEntriesList()).extracting(e -> e.getKey()).containsExactly("k");
    Response leases = onLeader.list(ListRequest.newBuilder().setPrefix("values").build());
    assertThat(leases.getEntriesList()).extracting(e -> e.getResource()).contains("values");
  }

  // Guarantee: a batch is answered command by command, in order, each as if alone.
  @Test
  void batchAnswersEachCommand() {
    Response batch =
        onLeader.batch(
            BatchRequest.newBuilder()
                .addRequests(
                    Request.newBuilder()
                        .setAcquire(
                            AcquireRequest.newBuilder()
                                .setResource("batched")
                                .setOwner("b")
                                .setTtlMs(30_000)))
                .addRequests(
                    Request.newBuilder()
                        .setAcquire(
                            AcquireRequest.newBuilder()
                                .setResource("batched")
                                .setOwner("c")
                                .setTtlMs(30_000)))
                .build());
    assertThat(batch.getCode()).isEqualTo(ResultCode.BATCH_ANSWERED);
    assertThat(batch.getBatchList())
        .extracting(Response::getCode)
        .containsExactly(ResultCode.GRANTED, ResultCode.HELD);
    Response notBatchable =
        onLeader.batch(
            BatchRequest.newBuilder()
                .addRequests(
                    Request.newBuilder().setRevoke(RevokeRequest.newBuilder().setResource("x")))
                .build());
    assertThat(notBatchable.getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(notBatchable.getMessage()).contains("batch");
  }

  // Guarantee: a retry of an acquire or a write with the same request id is answered the first
  // answer and changes nothing.
  @Test
  void retriesWithTheSameRequestIdApplyOnce() {
    AcquireRequest acquire =
        AcquireRequest.newBuilder()
            .setResource("once")
            .setOwner("o")
            .setTtlMs(30_000)
            .setRequestId("acq-1")
            .build();
    Response first = onLeader.acquire(acquire);
    Response retry = onLeader.acquire(acquire);
    assertThat(retry.getCode()).isEqualTo(ResultCode.GRANTED);
    assertThat(retry.getToken()).isEqualTo(first.getToken());
    WriteRequest w =
        write("once", first.getToken(), "k", "v").toBuilder().setRequestId("w-1").build();
    Response accepted = onLeader.write(w);
    Response again = onLeader.write(w);
    assertThat(again.getCode()).isEqualTo(ResultCode.ACCEPTED);
    assertThat(again.getVersion()).isEqualTo(accepted.getVersion()).isEqualTo(1);
  }

  // Guarantee: a follower answers commands and linearizable queries NOT_LEADER, naming the leader
  // and its client address, and changes nothing; it answers stale queries itself.
  @Test
  void followersRedirectAndAnswerStaleReads() throws Exception {
    Response redirected =
        onFollower.acquire(
            AcquireRequest.newBuilder()
                .setResource("redirect")
                .setOwner("f")
                .setTtlMs(5000)
                .build());
    assertThat(redirected.getCode()).isEqualTo(ResultCode.NOT_LEADER);
    assertThat(redirected.getLeaderId()).isEqualTo(leader);
    assertThat(redirected.getLeaderAddress()).isEqualTo(cluster.clientAddress(leader));
    assertThat(onLeader.getLease(LeaseQuery.newBuilder().setResource("redirect").build()).getCode())
        .isEqualTo(ResultCode.NOT_FOUND);
    assertThat(
            onFollower.read(read("redirect", "k", Consistency.CONSISTENCY_LINEARIZABLE)).getCode())
        .isEqualTo(ResultCode.NOT_LEADER);

    Response granted = acquire("stale-read", 30_000);
    onLeader.write(write("stale-read", granted.getToken(), "k", "v"));
    long index = cluster.lastApplied(leader);
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .until(() -> cluster.lastApplied(follower) >= index);
    Response stale = onFollower.read(read("stale-read", "k", Consistency.CONSISTENCY_STALE));
    assertThat(stale.getCode()).isEqualTo(ResultCode.FOUND);
    assertThat(stale.getValue().toStringUtf8()).isEqualTo("v");
    assertThat(
            onFollower
                .getLease(
                    LeaseQuery.newBuilder()
                        .setResource("stale-read")
                        .setConsistency(Consistency.CONSISTENCY_STALE)
                        .build())
                .getToken())
        .isEqualTo(granted.getToken());
  }

  // Guarantee: the group field is reserved: any value but empty is answered INVALID_ARGUMENT on
  // every call that has it, and nothing changes.
  @Test
  void anyGroupButEmptyIsRefused() {
    String g = "shard-7";
    List<Response> answers =
        List.of(
            onLeader.acquire(
                AcquireRequest.newBuilder()
                    .setResource("grouped")
                    .setOwner("o")
                    .setTtlMs(5000)
                    .setGroup(g)
                    .build()),
            onLeader.renew(
                RenewRequest.newBuilder().setResource("grouped").setToken(1).setGroup(g).build()),
            onLeader.release(
                ReleaseRequest.newBuilder().setResource("grouped").setToken(1).setGroup(g).build()),
            onLeader.revoke(RevokeRequest.newBuilder().setResource("grouped").setGroup(g).build()),
            onLeader.write(write("grouped", 1, "k", "v").toBuilder().setGroup(g).build()),
            onLeader.cancelWait(
                CancelWaitRequest.newBuilder()
                    .setResource("grouped")
                    .setRequestId("r")
                    .setGroup(g)
                    .build()),
            onLeader.batch(BatchRequest.newBuilder().setGroup(g).build()),
            onLeader.read(
                read("grouped", "k", Consistency.CONSISTENCY_STALE).toBuilder()
                    .setGroup(g)
                    .build()),
            onLeader.validate(
                ValidateRequest.newBuilder()
                    .setResource("grouped")
                    .setToken(1)
                    .setGroup(g)
                    .build()),
            onLeader.getLease(LeaseQuery.newBuilder().setResource("grouped").setGroup(g).build()),
            onLeader.list(ListRequest.newBuilder().setGroup(g).build()),
            onLeader.backup(BackupRequest.newBuilder().setGroup(g).build()));
    assertThat(answers).extracting(Response::getCode).containsOnly(ResultCode.INVALID_ARGUMENT);
    assertThat(answers.get(0).getMessage()).contains("group");
    var watch =
        onLeader.watch(WatchRequest.newBuilder().setResource("grouped").setGroup(g).build());
    assertThat(watch.next().getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(onLeader.getLease(LeaseQuery.newBuilder().setResource("grouped").build()).getCode())
        .isEqualTo(ResultCode.NOT_FOUND);
  }

  // Guarantee: a client protocol call sent to a Raft port fails with FAILED_PRECONDITION naming
  // the node's client address (also in a trailer), so a client can tell and redirect itself.
  @Test
  void aCallToTheRaftPortSaysWhereTheClientPortIs() {
    String raftAddress = cluster.config().peers().get(0).address();
    FencekeeperGrpc.FencekeeperBlockingStub wrong = channels.blocking(raftAddress);
    assertThatThrownBy(() -> wrong.nodeStatus(NodeInfoQuery.getDefaultInstance()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
              assertThat(e.getStatus().getDescription())
                  .contains("Raft port")
                  .contains(cluster.clientAddress("n1"));
              assertThat(
                      e.getTrailers()
                          .get(
                              Metadata.Key.of(
                                  RaftPortGuide.CLIENT_ADDRESS_KEY,
                                  Metadata.ASCII_STRING_MARSHALLER)))
                  .isEqualTo(cluster.clientAddress("n1"));
            });
  }

  // Guarantee: bytes that are no protobuf message are refused with gRPC INVALID_ARGUMENT naming
  // the request type, before the service sees them; the session stream refuses them the same way;
  // a message with a field of the wrong wire type leaves that field unset and is answered
  // INVALID_ARGUMENT; unknown fields are ignored. Nothing changes in any case.
  @Test
  void malformedBytesAreRefusedAndChangeNothing() throws Exception {
    ManagedChannel channel = channels.to(cluster.clientAddress(leader));
    MethodDescriptor<byte[], byte[]> acquireRaw =
        MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(FencekeeperGrpc.getAcquireMethod().getFullMethodName())
            .setRequestMarshaller(RaftPortGuide.Bytes.INSTANCE)
            .setResponseMarshaller(RaftPortGuide.Bytes.INSTANCE)
            .build();
    CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS);
    // A length-delimited field whose length runs past the end: no message at all.
    byte[] garbage = {0x0a, 0x7f, 0x01};
    assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(channel, acquireRaw, options, garbage))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getStatus().getDescription())
                  .contains("no valid fencekeeper.v1.AcquireRequest")
                  .contains("nothing was done");
            });
    MethodDescriptor<byte[], byte[]> sessionRaw =
        MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
            .setFullMethodName(FencekeeperGrpc.getSessionMethod().getFullMethodName())
            .setRequestMarshaller(RaftPortGuide.Bytes.INSTANCE)
            .setResponseMarshaller(RaftPortGuide.Bytes.INSTANCE)
            .build();
    Collector<byte[]> sessionOut = new Collector<>();
    ClientCalls.asyncBidiStreamingCall(channel.newCall(sessionRaw, options), sessionOut)
        .onNext(garbage);
    Throwable sessionRefused = sessionOut.ended.get(10, TimeUnit.SECONDS);
    assertThat(Status.fromThrowable(sessionRefused).getCode())
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(Status.fromThrowable(sessionRefused).getDescription())
        .contains("fencekeeper.v1.SessionRequest");
    assertThat(sessionOut.messages).isEmpty();

    // resource (field 1) sent as a varint: a field of the wrong type is kept as unknown.
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    out.writeInt64(1, 42);
    out.writeString(2, "owner");
    out.writeInt64(3, 5000);
    out.writeString(999, "an unknown field");
    out.flush();
    Response wrongType =
        Response.parseFrom(
            ClientCalls.blockingUnaryCall(channel, acquireRaw, options, bytes.toByteArray()));
    assertThat(wrongType.getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(wrongType.getMessage()).contains("resource");

    // Unknown fields beside a valid request are ignored.
    bytes.reset();
    out = CodedOutputStream.newInstance(bytes);
    out.writeString(1, "with-unknown-field");
    out.writeString(2, "owner");
    out.writeInt64(3, 5000);
    out.writeString(999, "an unknown field");
    out.flush();
    Response ignored =
        Response.parseFrom(
            ClientCalls.blockingUnaryCall(channel, acquireRaw, options, bytes.toByteArray()));
    assertThat(ignored.getCode()).isEqualTo(ResultCode.GRANTED);
    assertThat(onLeader.list(ListRequest.newBuilder().setPrefix("42").build()).getEntriesCount())
        .isZero();
  }

  // Guarantee: a request longer than the node's message bound is refused by gRPC with
  // RESOURCE_EXHAUSTED before it is read, and nothing changes.
  @Test
  void oversizeMessagesAreRefused() {
    Response granted = acquire("oversize", 30_000);
    String huge = "x".repeat(cluster.config().limits().maxRequestMessageBytes() + 1);
    assertThatThrownBy(() -> onLeader.write(write("oversize", granted.getToken(), "k", huge)))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
    assertThat(onLeader.read(read("oversize", "k", Consistency.CONSISTENCY_LINEARIZABLE)).getCode())
        .isEqualTo(ResultCode.NOT_FOUND);
    // Within the message bound but over the value limit: the cluster's own INVALID_ARGUMENT.
    String big = "y".repeat(cluster.config().limits().maxValueBytes() + 1);
    assertThat(onLeader.write(write("oversize", granted.getToken(), "k", big)).getCode())
        .isEqualTo(ResultCode.INVALID_ARGUMENT);
  }
}
