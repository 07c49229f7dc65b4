package dev.fencekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.proto.WriteRequest;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.thirdparty.io.grpc.Server;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCallStreamObserver;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How the client uses the calls of {@code fencekeeper.v1}, seen from a scripted node: a waiting
 * acquire is one Acquire call the node holds open, a watch is one stream, concurrent commands each
 * get their own answer.
 */
@Timeout(30)
class NativeCallsTest {
  /** A node that records what it is asked and answers only what a test scripts. */
  private static final class ScriptedNode extends FencekeeperGrpc.FencekeeperImplBase {
    final List<AcquireRequest> acquires = new CopyOnWriteArrayList<>();
    final List<ServerCallStreamObserver<Response>> heldAcquires = new CopyOnWriteArrayList<>();
    final AtomicInteger acquiresCancelled = new AtomicInteger();
    final List<CancelWaitRequest> cancelWaits = new CopyOnWriteArrayList<>();
    final List<WatchRequest> watches = new CopyOnWriteArrayList<>();
    final List<StreamObserver<Response>> watchStreams = new CopyOnWriteArrayList<>();
    final List<WriteRequest> writes = new CopyOnWriteArrayList<>();
    final AtomicInteger batches = new AtomicInteger();

    @Override
    public void acquire(AcquireRequest request, StreamObserver<Response> out) {
      acquires.add(request);
      ServerCallStreamObserver<Response> held = (ServerCallStreamObserver<Response>) out;
      held.setOnCancelHandler(acquiresCancelled::incrementAndGet);
      heldAcquires.add(held); // answered by the test, or never
    }

    @Override
    public void cancelWait(CancelWaitRequest request, StreamObserver<Response> out) {
      cancelWaits.add(request);
      out.onNext(Response.newBuilder().setCode(ResultCode.RELEASED).build());
      out.onCompleted();
    }

    @Override
    public void watch(WatchRequest request, StreamObserver<Response> out) {
      watches.add(request);
      watchStreams.add(out);
    }

    @Override
    public void write(WriteRequest request, StreamObserver<Response> out) {
      writes.add(request);
      out.onNext(Response.newBuilder().setCode(ResultCode.ACCEPTED).setVersion(1).build());
      out.onCompleted();
    }

    @Override
    public void batch(BatchRequest request, StreamObserver<Response> out) {
      batches.incrementAndGet();
      Response.Builder answer = Response.newBuilder().setCode(ResultCode.BATCH_ANSWERED);
      for (dev.fencekeeper.proto.Request r : request.getRequestsList()) {
        writes.add(r.getWrite());
        answer.addBatch(Response.newBuilder().setCode(ResultCode.ACCEPTED).setVersion(1));
      }
      out.onNext(answer.build());
      out.onCompleted();
    }

    @Override
    public void nodeStatus(NodeInfoQuery request, StreamObserver<Response> out) {
      out.onNext(
          Response.newBuilder()
              .setCode(ResultCode.FOUND)
              .setNode(NodeInfo.newBuilder().setId("n1"))
              .build());
      out.onCompleted();
    }
  }

  private final ScriptedNode node = new ScriptedNode();
  private Server server;
  private FencingClient client;

  @BeforeEach
  void start() throws Exception {
    int port = LocalPorts.freePort();
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
            .addService(node)
            .build()
            .start();
    client =
        FencingClient.builder()
            .endpoints(List.of("127.0.0.1:" + port))
            .closeTimeout(Duration.ofSeconds(1))
            .build();
  }

  @AfterEach
  void stop() {
    client.close();
    server.shutdownNow();
  }

  /**
   * Waits up to 15 s (a loaded machine) for {@code condition}, failing the test if it never holds.
   */
  private static void waitFor(java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 15 s");
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  private static Response event(long index, int seq) {
    return Response.newBuilder()
        .setCode(ResultCode.FOUND)
        .addEvents(
            dev.fencekeeper.proto.LeaseEvent.newBuilder()
                .setIndex(index)
                .setSeq(seq)
                .setType(dev.fencekeeper.proto.LeaseEvent.Type.ACQUIRED)
                .setResource("job")
                .setToken(index))
        .setAppliedIndex(index)
        .build();
  }

  // Guarantee: an acquire that waits is one Acquire call carrying what is left of the wait, which
  // the node holds open (the client neither polls nor re-sends it), and its grant is the lease.
  @Test
  void aWaitingAcquireIsOneCallTheNodeAnswersWhenGranted() throws InterruptedException {
    CompletableFuture<Lease> waiting =
        client.acquireAsync(
            "job", Duration.ofSeconds(30), Duration.ofSeconds(20), AcquireOptions.defaults());
    waitFor(() -> node.heldAcquires.size() == 1);
    AcquireRequest sent = node.acquires.get(0);
    assertThat(sent.getWaitMs()).isBetween(15_000L, 20_000L);
    assertThat(sent.getRequestId()).isNotEmpty();

    // Half a second later: still the one call, nothing else asked.
    Thread.sleep(500);
    assertThat(node.acquires).hasSize(1);
    assertThat(node.watches).isEmpty();

    node.heldAcquires
        .get(0)
        .onNext(
            Response.newBuilder()
                .setCode(ResultCode.GRANTED)
                .setToken(42)
                .setLive(true)
                .setNowMs(1_000)
                .setExpiresAtMs(31_000)
                .build());
    node.heldAcquires.get(0).onCompleted();
    Lease lease = waiting.join();
    assertThat(lease.token()).isEqualTo(42);
    assertThat(lease.isValid()).isTrue();
    lease.abandon();
  }

  // Guarantee: giving up a waiting acquire (cancel(true)) cancels its call on the node, which then
  // leaves the line, and sends a CancelWait with the same request id, which also releases a grant
  // that raced with the cancel: no ghost grant.
  @Test
  void cancellingAWaitingAcquireCancelsTheCallAndSendsCancelWait() {
    CompletableFuture<Lease> waiting =
        client.acquireAsync(
            "job", Duration.ofSeconds(30), Duration.ofSeconds(20), AcquireOptions.defaults());
    waitFor(() -> node.heldAcquires.size() == 1);
    String requestId = node.acquires.get(0).getRequestId();

    waiting.cancel(true);

    waitFor(() -> node.acquiresCancelled.get() == 1);
    waitFor(() -> node.cancelWaits.size() == 1);
    assertThat(node.cancelWaits.get(0).getRequestId()).isEqualTo(requestId);
    assertThat(node.cancelWaits.get(0).getResource()).isEqualTo("job");
    assertThatThrownBy(waiting::join).isInstanceOf(CancellationException.class);
  }

  // Guarantee: a watch reads one stream, whatever the number of events; when the stream breaks it
  // is re-opened from the last event delivered, so nothing is skipped or repeated.
  @Test
  void aWatchReadsOneStreamAndResumesFromTheLastEvent() {
    List<LeaseEvent> seen = new CopyOnWriteArrayList<>();
    try (Watch watch = client.watch("job", false, 0, seen::add)) {
      waitFor(() -> node.watchStreams.size() == 1);
      StreamObserver<Response> first = node.watchStreams.get(0);
      first.onNext(event(5, 0));
      first.onNext(event(7, 0));
      first.onNext(event(7, 1));
      waitFor(() -> seen.size() == 3);
      assertThat(node.watches).hasSize(1);
      assertThat(watch.lastIndex()).isEqualTo(7);

      first.onError(Status.UNAVAILABLE.withDescription("node stopped").asRuntimeException());
      waitFor(() -> node.watchStreams.size() == 2);
      WatchRequest resumed = node.watches.get(1);
      assertThat(resumed.getResource()).isEqualTo("job");
      assertThat(resumed.getAfterIndex()).isEqualTo(7);
      assertThat(resumed.getAfterSeq()).isEqualTo(1);

      // A node whose replay overlaps what was delivered: each event still arrives once.
      node.watchStreams.get(1).onNext(event(7, 1));
      node.watchStreams.get(1).onNext(event(9, 0));
      waitFor(() -> seen.size() == 4);
      List<Long> indexes = new ArrayList<>();
      seen.forEach(e -> indexes.add(e.index()));
      assertThat(indexes).containsExactly(5L, 7L, 7L, 9L);
    }
  }

  // Guarantee: concurrent writes, alone or in a Batch call, each get their own answer and their own
  // request id (one scheme for every id the client makes).
  @Test
  void concurrentWritesEachGetTheirOwnAnswerAndRequestId() {
    List<CompletableFuture<WriteResult>> writes = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      writes.add(client.writeAsync("job", 1, List.of(KeyChange.put("k" + i, "v")), null));
    }
    writes.forEach(w -> assertThat(w.join().isAccepted()).isTrue());
    assertThat(node.writes).hasSize(20);
    assertThat(node.writes.stream().map(WriteRequest::getRequestId).distinct()).hasSize(20);
  }
}
