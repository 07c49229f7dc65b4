package dev.fencekeeper.client.fakenode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.LeaseHeldException;
import dev.fencekeeper.client.ReadResult;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.WriteResult;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A node that accepts connections and calls and never answers: every call ends at the client's call
 * timeout, each attempt bounded by the request timeout; only a command's failure speaks of an
 * outcome it cannot know.
 */
class SilentNodeTest {
  private static final Duration REQUEST_TIMEOUT = Duration.ofMillis(150);
  private static final Duration CALL_TIMEOUT = Duration.ofMillis(900);
  // A loaded two-core machine may run a timer late; the end stays below the 3 s unreachable
  // bound, which a call that ignored its own timeout would wait out.
  private static final long SLACK_MS = 2_000;

  private final FakeCluster cluster = new FakeCluster();
  private final FakeNode node = FakeNode.start(cluster, "n1");
  private final FencingClient client =
      FencingClient.builder()
          .endpoints(node.address())
          .requestTimeout(REQUEST_TIMEOUT)
          .callTimeout(CALL_TIMEOUT)
          .closeTimeout(Duration.ofMillis(500))
          .build();

  @AfterEach
  void stop() {
    client.close();
    node.close();
    cluster.close();
  }

  private static long millisSince(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  private static void endsAtTheCallTimeout(long elapsedMs) {
    assertThat(elapsedMs)
        .as("ended at the call timeout")
        .isBetween(CALL_TIMEOUT.toMillis() - 100, CALL_TIMEOUT.toMillis() + SLACK_MS);
  }

  // Guarantee: a command sent to a node that never answers ends at the call timeout (retried in
  // attempts each bounded by the request timeout) as UNAVAILABLE saying it may or may not have
  // been applied.
  @Test
  void aCommandEndsAtTheCallTimeoutWithAnUnknownOutcome() {
    node.hang(true);

    long start = System.nanoTime();
    Result acquired = client.acquireToken("r", Duration.ofSeconds(5), "me");
    long elapsed = millisSince(start);

    endsAtTheCallTimeout(elapsed);
    assertThat(acquired.code()).isEqualTo(ResultCode.UNAVAILABLE);
    assertThat(acquired.message()).contains("may or may not have been applied");
    assertThat(node.calls("Acquire").size())
        .as("attempts, each bounded by the request timeout")
        .isGreaterThanOrEqualTo(2);

    start = System.nanoTime();
    WriteResult written = client.write("r", 101, "k", "v".getBytes(StandardCharsets.UTF_8));
    endsAtTheCallTimeout(millisSince(start));
    assertThat(written.code()).isEqualTo(ResultCode.UNAVAILABLE);
    assertThat(written.isAccepted()).isFalse();
    assertThat(written.message()).contains("may or may not have been applied");
  }

  // Guarantee: a lease acquire from a node that never answers fails at the call timeout as a
  // FencingException UNAVAILABLE, never as LeaseHeldException (nobody was seen holding it).
  @Test
  void aLeaseAcquireEndsAtTheCallTimeoutAsUnavailable() {
    node.hang(true);

    long start = System.nanoTime();
    Throwable thrown = catchThrowable(() -> client.acquire("r", Duration.ofSeconds(5)));

    endsAtTheCallTimeout(millisSince(start));
    assertThat(thrown)
        .isInstanceOf(FencingException.class)
        .isNotInstanceOf(LeaseHeldException.class);
    assertThat(((FencingException) thrown).code()).isEqualTo(ResultCode.UNAVAILABLE);
  }

  // Guarantee: a query of a node that never answers ends at the call timeout as UNAVAILABLE and
  // says nothing about changes: a query changes nothing.
  @Test
  void aQueryEndsAtTheCallTimeoutAndSaysNothingOfChanges() {
    node.hang(true);

    long start = System.nanoTime();
    ReadResult read = client.read("r", "k");
    endsAtTheCallTimeout(millisSince(start));
    start = System.nanoTime();
    Result lease = client.lease("r");
    endsAtTheCallTimeout(millisSince(start));

    for (Result r : new Result[] {read, lease}) {
      assertThat(r.code()).isEqualTo(ResultCode.UNAVAILABLE);
      assertThat(r.message()).doesNotContain("applied").doesNotContain("may or may not");
    }
  }
}
