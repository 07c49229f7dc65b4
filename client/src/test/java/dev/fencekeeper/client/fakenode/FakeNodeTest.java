package dev.fencekeeper.client.fakenode;

import static dev.fencekeeper.client.fakenode.Until.until;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.grpc.Context;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The fake node itself, on the wire: an Acquire with a wait is held open by the node until granted
 * or given up, as fencing.proto says, so a client that leaves its waiting to the node can be tested
 * against it.
 */
class FakeNodeTest {
  private final FakeCluster cluster = new FakeCluster();
  private final FakeNode node = FakeNode.start(cluster, "n1");
  private final ManagedChannel channel =
      NettyChannelBuilder.forTarget(node.address()).usePlaintext().build();

  @AfterEach
  void stop() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    node.close();
    cluster.close();
  }

  private CompletableFuture<Response> acquireWaiting(Context.CancellableContext context) {
    CompletableFuture<Response> answer = new CompletableFuture<>();
    AcquireRequest request =
        AcquireRequest.newBuilder()
            .setResource("r")
            .setOwner("waiter")
            .setTtlMs(5_000)
            .setRequestId("waiter-1")
            .setWaitMs(20_000)
            .build();
    context.run(
        () ->
            FencekeeperGrpc.newStub(channel)
                .acquire(
                    request,
                    new StreamObserver<>() {
                      @Override
                      public void onNext(Response r) {
                        answer.complete(r);
                      }

                      @Override
                      public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                      }

                      @Override
                      public void onCompleted() {}
                    }));
    return answer;
  }

  // Guarantee: an Acquire with a wait stays open while the resource is held and is answered
  // GRANTED (live) when the holder lets go.
  @Test
  void aWaitingAcquireIsAnsweredWhenGranted() throws Exception {
    cluster.grantToOther("r", Duration.ofSeconds(30));
    try (Context.CancellableContext context = Context.current().withCancellation()) {
      CompletableFuture<Response> answer = acquireWaiting(context);
      until(() -> cluster.waiters("r") == 1, Duration.ofSeconds(3), "queued");
      assertThat(answer).isNotDone();

      cluster.release("r");

      Response granted = answer.get(3, TimeUnit.SECONDS);
      assertThat(granted.getCode()).isEqualTo(ResultCode.GRANTED);
      assertThat(granted.getLive()).isTrue();
      assertThat(cluster.liveToken("r")).isEqualTo(granted.getToken());
    }
  }

  // Guarantee: cancelling a held Acquire gives its place in line up: the holder's release grants
  // nobody.
  @Test
  void cancellingAWaitingAcquireLeavesTheLine() throws Exception {
    cluster.grantToOther("r", Duration.ofSeconds(30));
    Context.CancellableContext context = Context.current().withCancellation();
    acquireWaiting(context);
    until(() -> cluster.waiters("r") == 1, Duration.ofSeconds(3), "queued");

    context.cancel(null);

    until(() -> cluster.waiters("r") == 0, Duration.ofSeconds(3), "the place in line given up");
    cluster.release("r");
    Thread.sleep(100);
    assertThat(cluster.liveToken("r")).isZero();
  }
}
