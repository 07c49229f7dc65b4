package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.server.RaftConfig;
import dev.fencekeeper.testing.TestCluster;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile requests sent as raw bytes to the client ports of three real nodes (no fencekeeper client
 * to tidy them up), leader and followers alike, as commands and as reads: a request that decodes
 * goes to the call its command names, with the hostile fields in it; anything else goes to one call
 * or another as it is. No node crashes, the cluster keeps serving, and afterwards every replica's
 * state digest is identical at the same applied index.
 */
class HostileInputClusterTest {
  private static final int REQUESTS = 400;

  /** The client protocol's unary calls that take a command or a read, by the command they carry. */
  private static final Map<Request.CommandCase, MethodDescriptor<?, ?>> CALLS =
      Map.ofEntries(
          Map.entry(Request.CommandCase.ACQUIRE, FencekeeperGrpc.getAcquireMethod()),
          Map.entry(Request.CommandCase.RENEW, FencekeeperGrpc.getRenewMethod()),
          Map.entry(Request.CommandCase.RELEASE, FencekeeperGrpc.getReleaseMethod()),
          Map.entry(Request.CommandCase.REVOKE, FencekeeperGrpc.getRevokeMethod()),
          Map.entry(Request.CommandCase.WRITE, FencekeeperGrpc.getWriteMethod()),
          Map.entry(Request.CommandCase.BATCH, FencekeeperGrpc.getBatchMethod()),
          Map.entry(Request.CommandCase.CANCEL_WAIT, FencekeeperGrpc.getCancelWaitMethod()),
          Map.entry(Request.CommandCase.READ, FencekeeperGrpc.getReadMethod()),
          Map.entry(Request.CommandCase.VALIDATE, FencekeeperGrpc.getValidateMethod()),
          Map.entry(Request.CommandCase.LEASE, FencekeeperGrpc.getGetLeaseMethod()),
          Map.entry(Request.CommandCase.LIST, FencekeeperGrpc.getListMethod()));

  private static final List<MethodDescriptor<?, ?>> ANY_CALL = List.copyOf(CALLS.values());

  @TempDir Path dir;

  @Test
  void hostileRequestsLeaveEveryReplicaIdenticalAndServing() throws Exception {
    try (TestCluster cluster = TestCluster.start(dir)) {
      cluster.awaitLeader();
      FencingClient fencing = cluster.newClient("fuzz-check");
      long token = fencing.acquireToken("r1", Duration.ofMinutes(5), "fuzz-check").token();
      fencing.write("r1", token, "k1", new byte[] {1});

      List<byte[]> requests =
          HostileInputPropertiesTest.hostileRequestBytes().sampleStream().limit(REQUESTS).toList();
      List<ManagedChannel> channels = new ArrayList<>();
      try {
        for (String address : cluster.clientAddresses()) {
          int colon = address.lastIndexOf(':');
          channels.add(
              NettyChannelBuilder.forAddress(
                      address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)))
                  .usePlaintext()
                  .build());
        }
        List<CompletableFuture<?>> sent = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
          sent.add(send(channels.get(i % channels.size()), requests.get(i), i));
        }
        CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
      } finally {
        channels.forEach(ManagedChannel::shutdownNow);
      }

      assertThat(cluster.running()).hasSize(3);
      for (var node : cluster.running().values()) {
        assertThat(
                node.raftServer()
                    .getDivision(RaftConfig.groupId(cluster.config()))
                    .getInfo()
                    .isAlive())
            .isTrue();
      }
      assertThat(fencing.acquireToken("after-fuzz", Duration.ofSeconds(30), "fuzz-check").code())
          .isEqualTo(ResultCode.GRANTED);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  cluster.running().values().stream()
                          .map(n -> n.stateMachine().digest())
                          .distinct()
                          .count()
                      == 1);
    }
  }

  /**
   * Sends {@code bytes} to the call its command names, as that call's message; bytes that decode to
   * no such command go as they are to call {@code i} of the list. Completes when answered or
   * refused: only that an answer comes matters.
   */
  private static CompletableFuture<Void> send(ManagedChannel channel, byte[] bytes, int i) {
    MethodDescriptor<?, ?> call = ANY_CALL.get(i % ANY_CALL.size());
    byte[] payload = bytes;
    try {
      Request parsed = Request.parseFrom(bytes);
      if (CALLS.containsKey(parsed.getCommandCase())) {
        call = CALLS.get(parsed.getCommandCase());
        payload =
            switch (parsed.getCommandCase()) {
              case ACQUIRE -> parsed.getAcquire().toByteArray();
              case RENEW -> parsed.getRenew().toByteArray();
              case RELEASE -> parsed.getRelease().toByteArray();
              case REVOKE -> parsed.getRevoke().toByteArray();
              case WRITE -> parsed.getWrite().toByteArray();
              case BATCH -> parsed.getBatch().toByteArray();
              case CANCEL_WAIT -> parsed.getCancelWait().toByteArray();
              case READ -> parsed.getRead().toByteArray();
              case VALIDATE -> parsed.getValidate().toByteArray();
              case LEASE -> parsed.getLease().toByteArray();
              case LIST -> parsed.getList().toByteArray();
              default -> bytes;
            };
      }
    } catch (IOException notARequest) {
      // sent as it is
    }
    MethodDescriptor<byte[], byte[]> raw =
        MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(call.getFullMethodName())
            .setRequestMarshaller(RawBytes.INSTANCE)
            .setResponseMarshaller(RawBytes.INSTANCE)
            .build();
    CompletableFuture<Void> answered = new CompletableFuture<>();
    ClientCalls.asyncUnaryCall(
        channel.newCall(raw, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS)),
        payload,
        new StreamObserver<byte[]>() {
          @Override
          public void onNext(byte[] value) {}

          @Override
          public void onError(Throwable t) {
            answered.complete(null);
          }

          @Override
          public void onCompleted() {
            answered.complete(null);
          }
        });
    return answered;
  }

  /** Messages as raw bytes, unread. */
  private static final class RawBytes implements MethodDescriptor.Marshaller<byte[]> {
    static final RawBytes INSTANCE = new RawBytes();

    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
