package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.WriteRequest;
import dev.fencekeeper.server.RaftConfig;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import dev.fencekeeper.testing.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Retries and bad input against three real nodes. */
@Timeout(120)
class RequestHandlingClusterTest {
  @TempDir static Path dataDir;
  static TestCluster cluster;
  static FencingClient client;
  static long token;

  @BeforeAll
  static void startCluster() {
    cluster = TestCluster.start(dataDir);
    cluster.awaitLeader();
    client = cluster.newClient("tester");
    token = client.acquireToken("orders", Duration.ofMinutes(5), "tester").token();
    client.write("orders", token, List.of(KeyChange.put("existing", "v1")), null);
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  // Guarantee: a write retried with the same request id under the same lease is applied once and
  // the retry gets the first answer back.
  @Test
  void writeRetriedWithTheSameRequestIdIsAppliedOnce() {
    WriteResult first =
        client.write("orders", token, List.of(KeyChange.put("counter", "1")), "req-42");
    WriteResult retry =
        client.write("orders", token, List.of(KeyChange.put("counter", "1")), "req-42");
    assertThat(first.code()).isEqualTo(dev.fencekeeper.client.ResultCode.ACCEPTED);
    assertThat(retry.code()).isEqualTo(dev.fencekeeper.client.ResultCode.ACCEPTED);
    assertThat(retry.version()).isEqualTo(first.version());
    assertThat(client.read("orders", "counter").version()).isEqualTo(1);

    WriteResult fresh =
        client.write("orders", token, List.of(KeyChange.put("counter", "2")), "req-43");
    assertThat(fresh.version()).isEqualTo(2);
  }

  // Guarantee: concurrent commands of one client share log entries (CommandCoalescer), and each
  // still gets exactly its own answer: every write applied once, in its own version, every stale
  // one rejected.
  @Test
  void concurrentCommandsOfOneClientShareLogEntriesAndEachGetsItsOwnAnswer() {
    String leader = cluster.awaitLeader();
    long appliedBefore = cluster.lastApplied(leader);
    List<CompletableFuture<WriteResult>> writes = new ArrayList<>();
    List<CompletableFuture<WriteResult>> stale = new ArrayList<>();
    for (int i = 0; i < 80; i++) {
      writes.add(
          client.writeAsync(
              "orders", token, List.of(KeyChange.put("coalesced-" + i, "v" + i)), null));
      if (i % 8 == 0) {
        stale.add(
            client.writeAsync(
                "orders", token - 1, List.of(KeyChange.put("coalesced-" + i, "old")), null));
      }
    }

    for (int i = 0; i < writes.size(); i++) {
      WriteResult w = writes.get(i).join();
      assertThat(w.code()).as("write %d", i).isEqualTo(dev.fencekeeper.client.ResultCode.ACCEPTED);
      assertThat(w.version()).as("write %d", i).isEqualTo(1);
      assertThat(client.read("orders", "coalesced-" + i).valueAsString()).isEqualTo("v" + i);
    }
    assertThat(stale).allSatisfy(w -> assertThat(w.join().isAccepted()).isFalse());
    long entries = cluster.lastApplied(leader) - appliedBefore;
    assertThat(entries)
        .as("log entries for %d commands", writes.size() + stale.size())
        .isLessThan(writes.size() + stale.size());
  }

  // Guarantee: a batch sent as one request is answered per request, in order, each as if alone; the
  // envelope's caller is the one every request in it is judged as.
  @Test
  void aBatchIsAnsweredPerRequest() {
    Request held =
        Request.newBuilder()
            .setAcquire(
                AcquireRequest.newBuilder()
                    .setResource("orders")
                    .setOwner("other")
                    .setTtlMs(10_000))
            .build();
    Request accepted =
        Request.newBuilder()
            .setWrite(
                WriteRequest.newBuilder()
                    .setResource("orders")
                    .setToken(token)
                    .addWrites(
                        KeyWrite.newBuilder()
                            .setKey("batched")
                            .setValue(ByteString.copyFromUtf8("b"))))
            .build();
    Request unknown =
        Request.newBuilder()
            .setWrite(
                WriteRequest.newBuilder()
                    .setResource("orders")
                    .setToken(Long.MAX_VALUE)
                    .addWrites(KeyWrite.newBuilder().setKey("batched")))
            .build();

    Result answer =
        Wire.send(
            client,
            Request.newBuilder()
                .setBatch(
                    BatchRequest.newBuilder()
                        .addRequests(held)
                        .addRequests(accepted)
                        .addRequests(unknown))
                .build());

    assertThat(Wire.response(answer).getCode()).isEqualTo(ResultCode.BATCH_ANSWERED);
    assertThat(Wire.response(answer).getBatchList())
        .extracting(r -> r.getCode())
        .containsExactly(ResultCode.HELD, ResultCode.ACCEPTED, ResultCode.UNKNOWN_TOKEN);
    assertThat(Wire.response(answer).getBatch(0).getToken()).isEqualTo(token);
    assertThat(client.read("orders", "batched").valueAsString()).isEqualTo("b");

    Result withRead =
        Wire.send(
            client,
            Request.newBuilder()
                .setBatch(
                    BatchRequest.newBuilder()
                        .addRequests(accepted)
                        .addRequests(
                            Request.newBuilder()
                                .setRead(
                                    ReadRequest.newBuilder().setResource("orders").setKey("k"))))
                .build());
    assertThat(withRead.code()).isEqualTo(dev.fencekeeper.client.ResultCode.INVALID_ARGUMENT);
    assertThat(withRead.message()).contains("request 2", "read");
  }

  // Guarantee: writes of a batch whose tokens are already superseded are refused in apply as they
  // are when sent alone: each gets its lone answer (the time aside), in its position among the
  // others' answers; the entry carries the batch as the client sent it; the replicas stay
  // identical. A batch of such writes only is answered per request, and through the client
  // concurrent stale writes that share requests are each told STALE_TOKEN.
  @Test
  void staleWritesInABatchAreRefusedInTheirPositionsAsAlone() throws IOException {
    long stale = client.acquireToken("early", Duration.ofMinutes(5), "first").token();
    client.release("early", stale);
    long current = client.acquireToken("early", Duration.ofMinutes(5), "second").token();
    Request late = writeTo("early", stale, "a");
    Request lateToo = writeTo("early", stale, "b");
    // Sent alone first: a refusal changes nothing, so the batch meets the same state.
    Response lateAlone = Wire.response(Wire.send(client, late));
    Response lateTooAlone = Wire.response(Wire.send(client, lateToo));
    assertThat(lateAlone.getCode()).isEqualTo(ResultCode.STALE_TOKEN);
    String leader = cluster.awaitLeader();
    long logEnd = lastLogIndex(leader);

    Request batch =
        batchOf(
            acquireOf("early-other"),
            late,
            writeTo("early", current, "a"),
            lateToo,
            Request.newBuilder()
                .setRenew(RenewRequest.newBuilder().setResource("early").setToken(current))
                .build());
    Response answer = Wire.response(Wire.send(client, batch));

    assertThat(answer.getBatchList())
        .extracting(Response::getCode)
        .containsExactly(
            ResultCode.GRANTED,
            ResultCode.STALE_TOKEN,
            ResultCode.ACCEPTED,
            ResultCode.STALE_TOKEN,
            ResultCode.RENEWED);
    assertThat(withoutTime(answer.getBatch(1))).isEqualTo(withoutTime(lateAlone));
    assertThat(withoutTime(answer.getBatch(3))).isEqualTo(withoutTime(lateTooAlone));
    List<LoggedCommand> logged = commandEntriesAfter(leader, logEnd);
    assertThat(logged).hasSize(1);
    assertThat(Request.parseFrom(logged.get(0).getClientRequest()).getBatch().getRequestsList())
        .as("the commands the entry carries")
        .containsExactlyElementsOf(batch.getBatch().getRequestsList());
    assertThat(client.read("early", "a").acceptedToken()).isEqualTo(current);
    assertThat(digestsOfEveryNode()).hasSize(1);

    // The renew moved the holder's expiry since: alone, the same writes are now answered with the
    // new one.
    Response lateNow = Wire.response(Wire.send(client, late));
    Response lateTooNow = Wire.response(Wire.send(client, lateToo));
    Response onlyStale = Wire.response(Wire.send(client, batchOf(late, lateToo)));
    assertThat(onlyStale.getCode()).isEqualTo(ResultCode.BATCH_ANSWERED);
    assertThat(onlyStale.getBatchList())
        .extracting(RequestHandlingClusterTest::withoutTime)
        .containsExactly(withoutTime(lateNow), withoutTime(lateTooNow));

    // Through the client, concurrent stale writes share requests (CommandCoalescer): each write is
    // told STALE_TOKEN itself.
    List<CompletableFuture<WriteResult>> concurrent = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      concurrent.add(
          client.writeAsync("early", stale, List.of(KeyChange.put("c" + i, "late")), null));
    }
    assertThat(concurrent)
        .allSatisfy(
            w ->
                assertThat(w.join().code())
                    .isEqualTo(dev.fencekeeper.client.ResultCode.STALE_TOKEN));
    assertThat(client.read("early", "c0").code())
        .isEqualTo(dev.fencekeeper.client.ResultCode.NOT_FOUND);
  }

  /** {@code answer} without its state-machine time, which moves with every entry applied. */
  private static Response withoutTime(Response answer) {
    return answer.toBuilder().clearNowMs().build();
  }

  // Guarantee: the same request id from a different client process (a restarted worker) is still
  // deduplicated, because the receipt is replicated state, not Ratis's per-client retry cache.
  @Test
  void requestIdIsHonouredAcrossClients() {
    client.write("orders", token, List.of(KeyChange.put("shipment", "s1")), "req-ship");
    try (FencingClient other = FencingClient.connect(cluster.config(), "tester")) {
      WriteResult again =
          other.write("orders", token, List.of(KeyChange.put("shipment", "s1")), "req-ship");
      assertThat(again.code()).isEqualTo(dev.fencekeeper.client.ResultCode.ACCEPTED);
    }
    assertThat(client.read("orders", "shipment").version()).isEqualTo(1);
  }

  // Guarantee: operator listings page through resources and keys in name order, filtered by prefix,
  // without skipping or repeating an entry between pages.
  @Test
  void listingsPageThroughResourcesAndKeys() {
    for (int i = 0; i < 5; i++) {
      Result grant = client.acquireToken("listed-" + i, Duration.ofMinutes(5), "lister");
      if (i == 0) {
        for (int k = 0; k < 3; k++) {
          client.write(
              "listed-0", grant.token(), List.of(KeyChange.put("key-" + k, "v" + k)), null);
        }
      }
    }
    Result first = client.listLeases("listed-", "", 3);
    assertThat(Wire.response(first).getEntriesList())
        .extracting(e -> e.getResource())
        .containsExactly("listed-0", "listed-1", "listed-2");
    assertThat(Wire.response(first).getMore()).isTrue();
    assertThat(Wire.response(first).getEntries(0).getLive()).isTrue();
    assertThat(Wire.response(first).getEntries(0).getOwner()).isEqualTo("lister");
    Result second = client.listLeases("listed-", "listed-2", 3);
    assertThat(Wire.response(second).getEntriesList())
        .extracting(e -> e.getResource())
        .containsExactly("listed-3", "listed-4");
    assertThat(Wire.response(second).getMore()).isFalse();

    Result keys = client.listKeys("listed-0", "key-", "key-0", 10);
    assertThat(Wire.response(keys).getEntriesList())
        .extracting(e -> e.getKey())
        .containsExactly("key-1", "key-2");
    assertThat(Wire.response(keys).getEntries(0).getValueBytes()).isEqualTo(2);
  }

  static Stream<Arguments> badRequests() {
    String huge = "x".repeat(257);
    return Stream.of(
        Arguments.of("empty resource", acquire("", 5000), "resource"),
        Arguments.of("oversized resource", acquire(huge, 5000), "resource"),
        Arguments.of("control character in resource", acquire("a\u0007b", 5000), "resource"),
        Arguments.of("TTL below the minimum", acquire("orders-2", 1), "ttl"),
        Arguments.of("TTL above the maximum", acquire("orders-2", 10L * 24 * 3600 * 1000), "ttl"),
        Arguments.of("write without keys", write(w -> w), "writes"),
        Arguments.of("empty key", write(w -> w.addWrites(KeyWrite.newBuilder().setKey(""))), "key"),
        Arguments.of(
            "oversized value",
            write(
                w ->
                    w.addWrites(
                        KeyWrite.newBuilder()
                            .setKey("k")
                            .setValue(ByteString.copyFrom(new byte[1024 * 1024 + 1])))),
            "value"),
        Arguments.of(
            "delete carrying a value",
            write(
                w ->
                    w.addWrites(
                        KeyWrite.newBuilder()
                            .setKey("k")
                            .setDelete(true)
                            .setValue(ByteString.copyFromUtf8("x")))),
            "value"),
        Arguments.of(
            "token zero",
            Request.newBuilder()
                .setWrite(
                    WriteRequest.newBuilder()
                        .setResource("orders")
                        .setToken(0)
                        .addWrites(KeyWrite.newBuilder().setKey("k")))
                .build(),
            "token"),
        Arguments.of("no command at all", Request.getDefaultInstance(), "command"));
  }

  // Guarantee: each malformed request is answered INVALID_ARGUMENT naming the field, and no
  // replica's state changes.
  @ParameterizedTest(name = "{0}")
  @MethodSource("badRequests")
  void badInputIsRejectedAndChangesNothing(String name, Request request, String field) {
    String before = stateOfEveryNode();
    Result result = Wire.send(client, request);
    assertThat(result.code())
        .as(result.toString())
        .isEqualTo(dev.fencekeeper.client.ResultCode.INVALID_ARGUMENT);
    assertThat(result.message()).contains(field);
    assertThat(stateOfEveryNode()).isEqualTo(before);
  }

  private static Request acquire(String resource, long ttlMs) {
    return Request.newBuilder()
        .setAcquire(
            AcquireRequest.newBuilder().setResource(resource).setOwner("tester").setTtlMs(ttlMs))
        .build();
  }

  private static Request write(Function<WriteRequest.Builder, WriteRequest.Builder> keys) {
    return Request.newBuilder()
        .setWrite(keys.apply(WriteRequest.newBuilder().setResource("orders").setToken(token)))
        .build();
  }

  private static Request writeTo(String resource, long token, String key) {
    return Request.newBuilder()
        .setWrite(
            WriteRequest.newBuilder()
                .setResource(resource)
                .setToken(token)
                .addWrites(
                    KeyWrite.newBuilder()
                        .setKey(key)
                        .setValue(ByteString.copyFromUtf8("from " + token))))
        .build();
  }

  private static Request acquireOf(String resource) {
    return Request.newBuilder()
        .setAcquire(
            AcquireRequest.newBuilder().setResource(resource).setOwner("tester").setTtlMs(300_000))
        .build();
  }

  private static Request batchOf(Request... requests) {
    return Request.newBuilder()
        .setBatch(BatchRequest.newBuilder().addAllRequests(List.of(requests)))
        .build();
  }

  private static RaftLog raftLog(String node) throws IOException {
    return cluster
        .node(node)
        .raftServer()
        .getDivision(RaftConfig.groupId(cluster.config()))
        .getRaftLog();
  }

  private static long lastLogIndex(String node) throws IOException {
    return raftLog(node).getLastEntryTermIndex().getIndex();
  }

  /**
   * The state-machine entries in {@code node}'s log after index {@code after}; Raft's own ones left
   * out.
   */
  private static List<LoggedCommand> commandEntriesAfter(String node, long after)
      throws IOException {
    RaftLog log = raftLog(node);
    List<LoggedCommand> entries = new ArrayList<>();
    for (long i = after + 1; i <= log.getLastEntryTermIndex().getIndex(); i++) {
      LogEntryProto entry = log.get(i);
      if (entry.hasStateMachineLogEntry()) {
        entries.add(
            LoggedCommand.parseFrom(entry.getStateMachineLogEntry().getLogData().toByteArray()));
      }
    }
    return entries;
  }

  /**
   * Each node's state digest once all have applied the same entries: one element when all are
   * identical.
   */
  private static java.util.Set<String> digestsOfEveryNode() {
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(30))
        .until(
            () ->
                cluster.running().keySet().stream().map(cluster::lastApplied).distinct().count()
                    == 1);
    return cluster.running().values().stream()
        .map(n -> n.stateMachine().digest().sha256())
        .collect(java.util.stream.Collectors.toSet());
  }

  private static String stateOfEveryNode() {
    // Followers learn the commit index from the leader's next append or heartbeat: compare states
    // only once every node has applied the same entries.
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(30))
        .until(
            () ->
                cluster.running().keySet().stream().map(cluster::lastApplied).distinct().count()
                    == 1);
    StringBuilder s = new StringBuilder();
    cluster
        .running()
        .forEach(
            (id, node) ->
                s.append(id)
                    .append(": ")
                    .append(node.stateMachine().read(RestartFromDiskClusterTest::render)));
    return s.toString();
  }
}
