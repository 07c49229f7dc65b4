package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class UntilAnsweredTest {
  private static CompletableFuture<Response> answer(ResultCode code) {
    return CompletableFuture.completedFuture(Response.newBuilder().setCode(code).build());
  }

  // Guarantee: a call that got no answer (UNAVAILABLE, NOT_LEADER, a timeout) is sent again until
  // one comes, and that answer is the outcome.
  @Test
  void sendsAgainUntilTheClusterAnswers() {
    AtomicInteger attempts = new AtomicInteger();
    Response r =
        UntilAnswered.send(
            Duration.ofSeconds(10),
            () ->
                switch (attempts.incrementAndGet()) {
                  case 1 -> answer(ResultCode.UNAVAILABLE);
                  case 2 -> CompletableFuture.failedFuture(new TimeoutException());
                  case 3 -> answer(ResultCode.NOT_LEADER);
                  default -> answer(ResultCode.ACCEPTED);
                });
    assertThat(r.getCode()).isEqualTo(ResultCode.ACCEPTED);
    assertThat(attempts).hasValue(4);
  }

  // Guarantee: when no node could be reached at all (every connection refused), the client's
  // UNAVAILABLE is the outcome at once: nothing was delivered, so there is no answer to wait for.
  @Test
  void nothingReachableEndsAtOnce() {
    AtomicInteger attempts = new AtomicInteger();
    Response r =
        UntilAnswered.send(
            Duration.ofSeconds(10),
            () -> {
              attempts.incrementAndGet();
              return answer(ResultCode.UNAVAILABLE);
            },
            () -> true);
    assertThat(r.getCode()).isEqualTo(ResultCode.UNAVAILABLE);
    assertThat(attempts).hasValue(1);
  }

  // Guarantee: a rejection is an answer: it is not sent again.
  @Test
  void aRejectionIsNotSentAgain() {
    AtomicInteger attempts = new AtomicInteger();
    Response r =
        UntilAnswered.send(
            Duration.ofSeconds(10),
            () -> {
              attempts.incrementAndGet();
              return answer(ResultCode.STALE_TOKEN);
            });
    assertThat(r.getCode()).isEqualTo(ResultCode.STALE_TOKEN);
    assertThat(attempts).hasValue(1);
  }

  // Guarantee: when the budget runs out, even with a call still out, the outcome is UNAVAILABLE,
  // saying the command may or may not have been applied, and it comes within the budget.
  @Test
  void unansweredWithinTheBudgetIsUnavailable() {
    long started = System.nanoTime();
    Response r = UntilAnswered.send(Duration.ofMillis(700), CompletableFuture::new);
    Duration took = Duration.ofNanos(System.nanoTime() - started);
    assertThat(r.getCode()).isEqualTo(ResultCode.UNAVAILABLE);
    assertThat(r.getMessage())
        .startsWith("no answer within 700ms (1 attempt with the same request id)")
        .endsWith("it may or may not have been applied");
    assertThat(took).isLessThan(Duration.ofMillis(1500));
  }
}
