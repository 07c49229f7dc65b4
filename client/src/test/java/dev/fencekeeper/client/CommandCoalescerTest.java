package dev.fencekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.WriteRequest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class CommandCoalescerTest {
  /** A transport whose answers the test gives; records what was sent, in order. */
  private static final class Transport {
    final List<Request> sent = Collections.synchronizedList(new ArrayList<>());
    final List<CompletableFuture<Response>> replies =
        Collections.synchronizedList(new ArrayList<>());

    /** The coalescer's side: each call as the envelope it would be in a batch. */
    CompletableFuture<Response> call(Rpc.Call<?> call) {
      return send(Rpc.envelope(call));
    }

    CompletableFuture<Response> send(Request request) {
      CompletableFuture<Response> reply = new CompletableFuture<>();
      sent.add(request);
      replies.add(reply);
      return reply;
    }

    /**
     * Answers entry {@code i} as a node would: each command, or each command of a batch, by its
     * token.
     */
    void answer(int i) {
      replies.get(i).complete(answerTo(sent.get(i)));
    }
  }

  /**
   * One entry in flight (write 1) and writes 2 and 3 waiting behind it, to leave together as one
   * batch.
   */
  private static final class TwoQueued {
    final Transport transport = new Transport();
    final CommandCoalescer coalescer = new CommandCoalescer(transport::call, 1, 100, 1 << 20);
    final CompletableFuture<Response> second;
    final CompletableFuture<Response> third;

    TwoQueued() {
      submit(coalescer, write(1));
      second = submit(coalescer, write(2));
      third = submit(coalescer, write(3));
    }
  }

  private static CompletableFuture<Response> submit(CommandCoalescer coalescer, Request request) {
    return coalescer.submit(Rpc.of(request));
  }

  static Response answerTo(Request request) {
    if (request.getCommandCase() != Request.CommandCase.BATCH) {
      return Response.newBuilder()
          .setCode(ResultCode.ACCEPTED)
          .setToken(request.getWrite().getToken())
          .build();
    }
    Response.Builder batch = Response.newBuilder().setCode(ResultCode.BATCH_ANSWERED);
    for (Request inner : request.getBatch().getRequestsList()) {
      batch.addBatch(answerTo(inner));
    }
    return batch.build();
  }

  private static Request write(long token) {
    return write(token, 0);
  }

  private static Request write(long token, int valueBytes) {
    return Request.newBuilder()
        .setWrite(
            WriteRequest.newBuilder()
                .setResource("r")
                .setToken(token)
                .addWrites(
                    KeyWrite.newBuilder()
                        .setKey("k")
                        .setValue(ByteString.copyFrom(new byte[valueBytes]))))
        .build();
  }

  private static Request revoke() {
    return Request.newBuilder().setRevoke(RevokeRequest.newBuilder().setResource("r")).build();
  }

  @Test
  void aLoneCommandIsSentAtOnceAndAsItself() {
    Transport transport = new Transport();
    CommandCoalescer coalescer = new CommandCoalescer(transport::call, 1, 100, 1 << 20);

    CompletableFuture<Response> answer = submit(coalescer, write(7));

    assertThat(transport.sent).containsExactly(write(7));
    transport.answer(0);
    assertThat(answer.join().getToken()).isEqualTo(7);
  }

  @Test
  void commandsSubmittedWhileEntriesAreInFlightLeaveTogetherAndEachGetsItsOwnAnswer() {
    Transport transport = new Transport();
    CommandCoalescer coalescer = new CommandCoalescer(transport::call, 1, 100, 1 << 20);
    List<CompletableFuture<Response>> answers = new ArrayList<>();
    for (long token = 1; token <= 4; token++) {
      answers.add(submit(coalescer, write(token)));
    }
    assertThat(transport.sent).hasSize(1);

    transport.answer(0);

    assertThat(transport.sent).hasSize(2);
    assertThat(transport.sent.get(1).getBatch().getRequestsList())
        .containsExactly(write(2), write(3), write(4));
    transport.answer(1);
    assertThat(answers).allMatch(CompletableFuture::isDone);
    assertThat(answers.stream().map(a -> a.join().getToken()).toList())
        .containsExactly(1L, 2L, 3L, 4L);
  }

  @Test
  void batchesStayWithinTheCommandAndValueBoundsAndNeverCarryAnUnbatchableCommand() {
    Transport transport = new Transport();
    CommandCoalescer coalescer = new CommandCoalescer(transport::call, 1, 3, 1_000);
    submit(coalescer, write(1));
    for (long token = 2; token <= 6; token++) {
      submit(coalescer, write(token)); // queued: 2..6
    }
    submit(coalescer, revoke());
    submit(coalescer, write(7, 600));
    submit(coalescer, write(8, 600));

    for (int i = 0; transport.sent.size() > i; i++) {
      transport.answer(i);
    }

    List<List<Request>> entries =
        transport.sent.stream()
            .map(
                r ->
                    r.getCommandCase() == Request.CommandCase.BATCH
                        ? r.getBatch().getRequestsList()
                        : List.of(r))
            .toList();
    assertThat(entries)
        .containsExactly(
            List.of(write(1)),
            List.of(write(2), write(3), write(4)), // at most 3 commands
            List.of(write(5), write(6)), // a revoke is not batched: it ends the batch
            List.of(revoke()),
            List.of(write(7, 600)), // 1,200 value bytes would exceed 1,000
            List.of(write(8, 600)));
  }

  @Test
  void aCommandWhoseCallerGaveUpWhileItWaitedIsNotSent() {
    TwoQueued queued = new TwoQueued();
    CompletableFuture<Response> timedOut = queued.second;

    timedOut.completeExceptionally(new java.util.concurrent.TimeoutException());
    queued.transport.answer(0);

    assertThat(queued.transport.sent).containsExactly(write(1), write(3));
  }

  @Test
  void aBatchThatFailsAsAWholeFailsEachOfItsCommands() {
    TwoQueued queued = new TwoQueued();
    CompletableFuture<Response> second = queued.second;
    CompletableFuture<Response> third = queued.third;
    queued.transport.answer(0);

    Response overloaded =
        Response.newBuilder().setCode(ResultCode.OVERLOADED).setMessage("full").build();
    queued.transport.replies.get(1).complete(overloaded);

    assertThat(second.join()).isEqualTo(overloaded);
    assertThat(third.join()).isEqualTo(overloaded);
  }

  @Test
  void aBatchAnsweredWithTheWrongNumberOfAnswersFailsRatherThanMisassigns() {
    TwoQueued queued = new TwoQueued();
    CompletableFuture<Response> second = queued.second;
    queued.transport.answer(0);

    queued
        .transport
        .replies
        .get(1)
        .complete(
            Response.newBuilder()
                .setCode(ResultCode.BATCH_ANSWERED)
                .addBatch(answerTo(write(2)))
                .build());

    assertThat(second).isCompletedExceptionally();
  }

  @Test
  @Timeout(60)
  void underConcurrencyEveryCommandIsAnsweredAndEachThreadsCommandsLeaveInItsOrder()
      throws Exception {
    // Answers arrive on other threads, and some inline (a transport that fails or answers at once).
    ExecutorService repliers = Executors.newFixedThreadPool(3);
    ConcurrentLinkedQueue<Request> sent = new ConcurrentLinkedQueue<>();
    CommandCoalescer coalescer =
        new CommandCoalescer(
            call -> {
              Request request = Rpc.envelope(call);
              sent.add(request);
              if (sent.size() % 5 == 0) {
                return CompletableFuture.completedFuture(answerTo(request));
              }
              return CompletableFuture.supplyAsync(() -> answerTo(request), repliers);
            },
            2,
            16,
            1 << 20);
    int threads = 8;
    int perThread = 500;
    ExecutorService submitters = Executors.newFixedThreadPool(threads);
    List<CompletableFuture<Response>> answers = Collections.synchronizedList(new ArrayList<>());
    for (int t = 0; t < threads; t++) {
      long base = (t + 1) * 1_000_000L;
      submitters.execute(
          () -> {
            for (int i = 1; i <= perThread; i++) {
              answers.add(submit(coalescer, write(base + i)));
            }
          });
    }
    submitters.shutdown();
    assertThat(submitters.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    repliers.shutdown();

    assertThat(answers).hasSize(threads * perThread);
    List<Long> order =
        sent.stream()
            .flatMap(
                r ->
                    r.getCommandCase() == Request.CommandCase.BATCH
                        ? r.getBatch().getRequestsList().stream()
                        : java.util.stream.Stream.of(r))
            .map(r -> r.getWrite().getToken())
            .toList();
    assertThat(order).hasSize(threads * perThread).doesNotHaveDuplicates();
    for (int t = 0; t < threads; t++) {
      long base = (t + 1) * 1_000_000L;
      assertThat(order.stream().filter(token -> token / 1_000_000L == base / 1_000_000L).toList())
          .as("thread %d's commands in the order it submitted them", t)
          .isSorted();
    }
    assertThat(sent.size()).as("entries sent").isLessThan(threads * perThread);
  }
}
