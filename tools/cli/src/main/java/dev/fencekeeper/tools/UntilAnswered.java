package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.Durations;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Sends one command again, with the same request id, until the cluster answers it or the budget is
 * spent. A command whose answer was lost (a leader that applied it and then stopped, a connection
 * cut while the answer was on its way) may have been applied; the cluster remembers its request id
 * and answers the repeat with what it did then, so the caller learns the command's one outcome
 * instead of UNAVAILABLE. Only when the budget runs out without an answer is the outcome
 * UNAVAILABLE, and then the command may or may not have been applied.
 */
final class UntilAnswered {
  /** How long a write or acquire keeps trying without {@code --timeout}. */
  static final Duration DEFAULT_BUDGET = Duration.ofSeconds(15);

  private static final Duration FIRST_PAUSE = Duration.ofMillis(100);
  private static final Duration LONGEST_PAUSE = Duration.ofSeconds(1);

  private UntilAnswered() {}

  /**
   * The first answer to {@code attempt} that is not "no answer" (UNAVAILABLE, or NOT_LEADER: the
   * node asked could not take it, so nothing changed), or UNAVAILABLE once {@code budget} is spent.
   * Every attempt must carry the same request id.
   */
  static Response send(Duration budget, Supplier<CompletableFuture<Response>> attempt) {
    return send(budget, attempt, () -> false);
  }

  /**
   * As {@link #send(Duration, Supplier)}, but gives up at once when {@code nothingReachable} says
   * no node could be contacted at all over the client's unreachable timeout: every connection was
   * refused, so no attempt reached a node and there is no lost answer to wait for (a dead cluster
   * fails as fast as the client does).
   */
  static Response send(
      Duration budget,
      Supplier<CompletableFuture<Response>> attempt,
      BooleanSupplier nothingReachable) {
    long deadline = System.nanoTime() + budget.toNanos();
    Duration pause = FIRST_PAUSE;
    Response last = null;
    int attempts = 0;
    while (true) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return unanswered(budget, attempts, last);
      }
      attempts++;
      Response answer = answerWithin(attempt.get(), left);
      if (answer != null && !isUnanswered(answer.getCode())) {
        return answer;
      }
      if (answer != null) {
        last = answer;
      }
      if (last != null && nothingReachable.getAsBoolean()) {
        return last;
      }
      long sleep = Math.min(pause.toNanos(), deadline - System.nanoTime());
      if (sleep > 0) {
        try {
          TimeUnit.NANOSECONDS.sleep(sleep);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return unanswered(budget, attempts, last);
        }
      }
      pause = pause.multipliedBy(2);
      if (pause.compareTo(LONGEST_PAUSE) > 0) {
        pause = LONGEST_PAUSE;
      }
    }
  }

  static boolean isUnanswered(ResultCode code) {
    return code == ResultCode.UNAVAILABLE || code == ResultCode.NOT_LEADER;
  }

  /** The attempt's answer, or null when none came within {@code nanos}. */
  private static Response answerWithin(CompletableFuture<Response> call, long nanos) {
    try {
      return call.get(nanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      call.cancel(false);
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (ExecutionException | CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof FencingException fe) {
        return Wire.response(fe.result());
      }
      // A bug in how the call was made stays one; anything else (a timeout, a broken connection)
      // is a call that got no answer.
      if (cause instanceof IllegalArgumentException || cause instanceof NullPointerException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error error) {
        throw error;
      }
      return Response.newBuilder()
          .setCode(ResultCode.UNAVAILABLE)
          .setMessage(cause == null ? "no answer" : cause.toString())
          .build();
    }
  }

  private static Response unanswered(Duration budget, int attempts, Response last) {
    String why = last != null && !last.getMessage().isEmpty() ? " (" + last.getMessage() + ")" : "";
    return Response.newBuilder()
        .setCode(ResultCode.UNAVAILABLE)
        .setMessage(
            "no answer within "
                + Durations.format(budget)
                + " ("
                + attempts
                + (attempts == 1 ? " attempt" : " attempts")
                + " with the same request id)"
                + why
                + "; it may or may not have been applied")
        .build();
  }
}
