package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.WriteResult;
import com.google.protobuf.ByteString;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.WriteRequest;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Stream;
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
    token = client.tryAcquire("orders", Duration.ofMinutes(5), "tester").token();
    client.write("orders", token, List.of(KeyChange.put("existing", "v1")), null);
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  // Guarantee: a write retried with the same request id under the same lease is applied once and the
  // retry gets the first answer back.
  @Test
  void writeRetriedWithTheSameRequestIdIsAppliedOnce() {
    WriteResult first = client.write("orders", token, List.of(KeyChange.put("counter", "1")), "req-42");
    WriteResult retry = client.write("orders", token, List.of(KeyChange.put("counter", "1")), "req-42");
    assertThat(first.code()).isEqualTo(ResultCode.ACCEPTED);
    assertThat(retry.code()).isEqualTo(ResultCode.ACCEPTED);
    assertThat(retry.version()).isEqualTo(first.version());
    assertThat(client.read("orders", "counter").version()).isEqualTo(1);

    WriteResult fresh = client.write("orders", token, List.of(KeyChange.put("counter", "2")), "req-43");
    assertThat(fresh.version()).isEqualTo(2);
  }

  // Guarantee: concurrent commands of one client share log entries (CommandCoalescer), and each still gets
  // exactly its own answer: every write applied once, in its own version, every stale one rejected.
  @Test
  void concurrentCommandsOfOneClientShareLogEntriesAndEachGetsItsOwnAnswer() {
    String leader = cluster.awaitLeader();
    long appliedBefore = cluster.lastApplied(leader);
    List<CompletableFuture<WriteResult>> writes = new ArrayList<>();
    List<CompletableFuture<WriteResult>> stale = new ArrayList<>();
    for (int i = 0; i < 80; i++) {
      writes.add(client.writeAsync("orders", token, List.of(KeyChange.put("coalesced-" + i, "v" + i)), null));
      if (i % 8 == 0) {
        stale.add(client.writeAsync("orders", token - 1, List.of(KeyChange.put("coalesced-" + i, "old")), null));
      }
    }

    for (int i = 0; i < writes.size(); i++) {
      WriteResult w = writes.get(i).join();
      assertThat(w.code()).as("write %d", i).isEqualTo(ResultCode.ACCEPTED);
      assertThat(w.version()).as("write %d", i).isEqualTo(1);
      assertThat(client.read("orders", "coalesced-" + i).valueAsString()).isEqualTo("v" + i);
    }
    assertThat(stale).allSatisfy(w -> assertThat(w.join().isAccepted()).isFalse());
    long entries = cluster.lastApplied(leader) - appliedBefore;
    assertThat(entries).as("log entries for %d commands", writes.size() + stale.size())
        .isLessThan(writes.size() + stale.size());
  }

  // Guarantee: a batch sent as one request is answered per request, in order, each as if alone; the
  // envelope's caller is the one every request in it is judged as.
  @Test
  void aBatchIsAnsweredPerRequest() {
    Request held = Request.newBuilder().setAcquire(AcquireRequest.newBuilder()
        .setResource("orders").setOwner("other").setTtlMs(10_000)).build();
    Request accepted = Request.newBuilder().setWrite(WriteRequest.newBuilder().setResource("orders")
        .setToken(token).addWrites(KeyWrite.newBuilder().setKey("batched").setValue(ByteString.copyFromUtf8("b"))))
        .build();
    Request unknown = Request.newBuilder().setWrite(WriteRequest.newBuilder().setResource("orders")
        .setToken(Long.MAX_VALUE).addWrites(KeyWrite.newBuilder().setKey("batched")))
        .build();

    Result answer = client.send(Request.newBuilder()
        .setBatch(BatchRequest.newBuilder().addRequests(held).addRequests(accepted).addRequests(unknown)).build());

    assertThat(answer.code()).isEqualTo(ResultCode.BATCH_ANSWERED);
    assertThat(answer.toProto().getBatchList()).extracting(r -> r.getCode())
        .containsExactly(ResultCode.HELD, ResultCode.ACCEPTED, ResultCode.UNKNOWN_TOKEN);
    assertThat(answer.toProto().getBatch(0).getToken()).isEqualTo(token);
    assertThat(client.read("orders", "batched").valueAsString()).isEqualTo("b");

    Result withRead = client.send(Request.newBuilder().setBatch(BatchRequest.newBuilder().addRequests(accepted)
        .addRequests(Request.newBuilder().setRead(ReadRequest.newBuilder().setResource("orders").setKey("k"))))
        .build());
    assertThat(withRead.code()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(withRead.message()).contains("request 2", "read");
  }

  // Guarantee: the same request id from a different client process (a restarted worker) is still
  // deduplicated, because the receipt is replicated state, not Ratis's per-client retry cache.
  @Test
  void requestIdIsHonouredAcrossClients() {
    client.write("orders", token, List.of(KeyChange.put("shipment", "s1")), "req-ship");
    try (FencingClient other = FencingClient.connect(cluster.config(), "tester")) {
      WriteResult again = other.write("orders", token, List.of(KeyChange.put("shipment", "s1")), "req-ship");
      assertThat(again.code()).isEqualTo(ResultCode.ACCEPTED);
    }
    assertThat(client.read("orders", "shipment").version()).isEqualTo(1);
  }

  // Guarantee: operator listings page through resources and keys in name order, filtered by prefix,
  // without skipping or repeating an entry between pages.
  @Test
  void listingsPageThroughResourcesAndKeys() {
    for (int i = 0; i < 5; i++) {
      Result grant = client.tryAcquire("listed-" + i, Duration.ofMinutes(5), "lister");
      if (i == 0) {
        for (int k = 0; k < 3; k++) {
          client.write("listed-0", grant.token(), List.of(KeyChange.put("key-" + k, "v" + k)), null);
        }
      }
    }
    Result first = client.listLeases("listed-", "", 3);
    assertThat(first.toProto().getEntriesList()).extracting(e -> e.getResource())
        .containsExactly("listed-0", "listed-1", "listed-2");
    assertThat(first.toProto().getMore()).isTrue();
    assertThat(first.toProto().getEntries(0).getLive()).isTrue();
    assertThat(first.toProto().getEntries(0).getOwner()).isEqualTo("lister");
    Result second = client.listLeases("listed-", "listed-2", 3);
    assertThat(second.toProto().getEntriesList()).extracting(e -> e.getResource())
        .containsExactly("listed-3", "listed-4");
    assertThat(second.toProto().getMore()).isFalse();

    Result keys = client.listKeys("listed-0", "key-", "key-0", 10);
    assertThat(keys.toProto().getEntriesList()).extracting(e -> e.getKey()).containsExactly("key-1", "key-2");
    assertThat(keys.toProto().getEntries(0).getValueBytes()).isEqualTo(2);
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
        Arguments.of("oversized value",
            write(w -> w.addWrites(KeyWrite.newBuilder().setKey("k")
                .setValue(com.google.protobuf.ByteString.copyFrom(new byte[1024 * 1024 + 1])))), "value"),
        Arguments.of("delete carrying a value",
            write(w -> w.addWrites(KeyWrite.newBuilder().setKey("k").setDelete(true)
                .setValue(com.google.protobuf.ByteString.copyFromUtf8("x")))), "value"),
        Arguments.of("token zero", Request.newBuilder().setWrite(WriteRequest.newBuilder()
            .setResource("orders").setToken(0).addWrites(KeyWrite.newBuilder().setKey("k"))).build(), "token"),
        Arguments.of("no command at all", Request.getDefaultInstance(), "command"));
  }

  // Guarantee: each malformed request is answered INVALID_ARGUMENT naming the field, and no replica's
  // state changes.
  @ParameterizedTest(name = "{0}")
  @MethodSource("badRequests")
  void badInputIsRejectedAndChangesNothing(String name, Request request, String field) {
    String before = stateOfEveryNode();
    Result result = client.send(request);
    assertThat(result.code()).as(result.toString()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(result.message()).contains(field);
    assertThat(stateOfEveryNode()).isEqualTo(before);
  }

  private static Request acquire(String resource, long ttlMs) {
    return Request.newBuilder()
        .setAcquire(AcquireRequest.newBuilder().setResource(resource).setOwner("tester").setTtlMs(ttlMs))
        .build();
  }

  private static Request write(Function<WriteRequest.Builder, WriteRequest.Builder> keys) {
    return Request.newBuilder()
        .setWrite(keys.apply(WriteRequest.newBuilder().setResource("orders").setToken(token)))
        .build();
  }

  private static String stateOfEveryNode() {
    // Followers learn the commit index from the leader's next append or heartbeat: compare states only
    // once every node has applied the same entries.
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() ->
        cluster.running().keySet().stream().map(cluster::lastApplied).distinct().count() == 1);
    StringBuilder s = new StringBuilder();
    cluster.running().forEach((id, node) ->
        s.append(id).append(": ").append(node.stateMachine().read(RestartFromDiskClusterTest::render)));
    return s.toString();
  }
}
