package dev.fencekeeper.client.fakenode;

import static dev.fencekeeper.client.fakenode.Until.until;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.LeaseHeldException;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.config.LocalPorts;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * No node reachable: connections refused. Every acquire form fails within the unreachable bound, as
 * what it is (FencingException UNAVAILABLE), never as someone else holding the resource.
 */
@Timeout(60)
class UnreachableClusterTest {
  private static final Duration UNREACHABLE = Duration.ofMillis(500);
  // Far below the 15 s call timeout: only the unreachable bound can end a call this soon.
  private static final long BOUND_MS = UNREACHABLE.toMillis() + 2_000;

  private static FencingClient client(String endpoint) {
    return FencingClient.builder()
        .endpoints(endpoint)
        .unreachableTimeout(UNREACHABLE)
        .callTimeout(Duration.ofSeconds(15))
        .closeTimeout(Duration.ofSeconds(1))
        .build();
  }

  private static void isUnavailable(Throwable thrown) {
    Throwable t =
        thrown instanceof CompletionException && thrown.getCause() != null
            ? thrown.getCause()
            : thrown;
    assertThat(t).isInstanceOf(FencingException.class).isNotInstanceOf(LeaseHeldException.class);
    assertThat(((FencingException) t).code()).isEqualTo(ResultCode.UNAVAILABLE);
  }

  // Guarantee: with every connection refused, each acquire form (plain, waiting, try, async)
  // fails fast, within the unreachable bound rather than the call timeout, with FencingException
  // UNAVAILABLE and never LeaseHeldException.
  @Test
  void everyAcquireFormFailsFastAsUnavailable() {
    int nobody = LocalPorts.freePort(); // reserved for this JVM, nothing listens on it
    try (FencingClient client = client("127.0.0.1:" + nobody)) {
      List<Function<FencingClient, Object>> forms =
          List.of(
              c -> c.acquire("r", Duration.ofSeconds(5)),
              c -> c.acquire("r", Duration.ofSeconds(5), Duration.ofSeconds(10)),
              c -> c.tryAcquire("r", Duration.ofSeconds(5)),
              c -> c.acquireAsync("r", Duration.ofSeconds(5)).join(),
              c -> c.acquireAsync("r", Duration.ofSeconds(5), Duration.ofSeconds(10)).join());
      for (Function<FencingClient, Object> form : forms) {
        long start = System.nanoTime();
        Throwable thrown = catchThrowable(() -> form.apply(client));
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        isUnavailable(thrown);
        assertThat(elapsedMs).as("failed within the unreachable bound").isLessThan(BOUND_MS);
      }
    }
  }

  // Guarantee: a cluster that stops while an acquire waits in line ends the wait with
  // FencingException UNAVAILABLE, within the unreachable bound, not LeaseHeldException.
  @Test
  void aClusterStoppedMidWaitEndsTheWaitAsUnavailable() throws Exception {
    try (FakeCluster cluster = new FakeCluster();
        FakeNode node = FakeNode.start(cluster, "n1");
        FencingClient client = client(node.address())) {
      cluster.grantToOther("r", Duration.ofSeconds(30));
      CompletableFuture<?> waiting =
          client.acquireAsync("r", Duration.ofSeconds(5), Duration.ofSeconds(20));
      until(() -> cluster.waiters("r") == 1, Duration.ofSeconds(3), "the acquire queued");

      long start = System.nanoTime();
      node.stop();
      Throwable thrown = catchThrowable(() -> waiting.get(BOUND_MS + 2_000, TimeUnit.MILLISECONDS));
      long elapsedMs = (System.nanoTime() - start) / 1_000_000;

      isUnavailable(
          thrown instanceof java.util.concurrent.ExecutionException ? thrown.getCause() : thrown);
      assertThat(elapsedMs).isLessThan(BOUND_MS + 1_000);
    }
  }
}
