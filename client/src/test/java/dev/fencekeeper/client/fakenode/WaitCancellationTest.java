package dev.fencekeeper.client.fakenode;

import static dev.fencekeeper.client.fakenode.Until.until;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.LeaseHeldException;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.LeaseEvent;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Giving up a waiting acquire: the place in line goes, and no grant is left held by nobody. */
class WaitCancellationTest {
  private final FakeCluster cluster = new FakeCluster();
  private final FakeNode node = FakeNode.start(cluster, "n1");
  private final FencingClient client =
      FencingClient.builder()
          .endpoints(node.address())
          .requestTimeout(Duration.ofMillis(500))
          .closeTimeout(Duration.ofSeconds(1))
          .build();

  @AfterEach
  void stop() {
    client.close();
    node.close();
    cluster.close();
  }

  /** After the holder lets go, nobody holds the resource: the given-up waiter got nothing. */
  private void holderReleasesAndNobodyIsGranted(long otherToken) throws InterruptedException {
    cluster.release("r");
    Thread.sleep(300); // a waiter left in line would be granted by now
    assertThat(cluster.liveToken("r")).as("no lease held by a waiter that gave up").isZero();
    assertThat(
            cluster.events().stream()
                .filter(e -> e.getType() == LeaseEvent.Type.ACQUIRED)
                .map(LeaseEvent::getToken))
        .containsExactly(otherToken);
  }

  // Guarantee: cancel(true) on a waiting acquire's future gives up its place in line on the
  // cluster, so the holder's release grants it nothing.
  @Test
  void cancellingTheFutureLeavesTheLine() throws InterruptedException {
    long other = cluster.grantToOther("r", Duration.ofSeconds(30));
    CompletableFuture<Lease> waiting =
        client.acquireAsync("r", Duration.ofSeconds(5), Duration.ofSeconds(20));
    until(() -> cluster.waiters("r") == 1, Duration.ofSeconds(3), "the acquire queued");

    assertThat(waiting.cancel(true)).isTrue();

    until(() -> cluster.waiters("r") == 0, Duration.ofSeconds(3), "the place in line given up");
    holderReleasesAndNobodyIsGranted(other);
  }

  // Guarantee: interrupting a thread blocked in acquire(resource, ttl, wait) throws
  // CancellationException, keeps the thread's interrupt status, and gives up the place in line.
  @Test
  void interruptingTheWaitingThreadLeavesTheLine() throws InterruptedException {
    long other = cluster.grantToOther("r", Duration.ofSeconds(30));
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicBoolean stillInterrupted = new AtomicBoolean();
    Thread worker =
        new Thread(
            () -> {
              try {
                client.acquire("r", Duration.ofSeconds(5), Duration.ofSeconds(20));
              } catch (RuntimeException e) {
                thrown.set(e);
                stillInterrupted.set(Thread.currentThread().isInterrupted());
              }
            });
    worker.start();
    until(() -> cluster.waiters("r") == 1, Duration.ofSeconds(3), "the acquire queued");

    worker.interrupt();
    worker.join(3_000);

    assertThat(worker.isAlive()).isFalse();
    assertThat(thrown.get()).isInstanceOf(CancellationException.class);
    assertThat(stillInterrupted.get()).as("interrupt status kept").isTrue();
    until(() -> cluster.waiters("r") == 0, Duration.ofSeconds(3), "the place in line given up");
    holderReleasesAndNobodyIsGranted(other);
  }

  // Guarantee: an acquire with no wait (Duration.ZERO) is a plain acquire: a held resource is
  // answered HELD at once, never queued, so nothing is granted to it when the holder lets go.
  @Test
  void aZeroWaitIsAnsweredHeldAndNeverQueues() throws InterruptedException {
    long other = cluster.grantToOther("r", Duration.ofSeconds(30));

    CompletableFuture<Lease> attempt =
        client.acquireAsync("r", Duration.ofSeconds(5), Duration.ZERO);

    assertThat(attempt)
        .failsWithin(Duration.ofSeconds(3))
        .withThrowableOfType(java.util.concurrent.ExecutionException.class)
        .havingCause()
        .isInstanceOf(LeaseHeldException.class)
        .extracting(e -> ((LeaseHeldException) e).result().code())
        .isEqualTo(ResultCode.HELD);
    assertThat(node.calls("Acquire"))
        .extracting(request -> ((AcquireRequest) request).getWaitMs())
        .as("the wait each Acquire asked the node for")
        .containsOnly(0L);
    holderReleasesAndNobodyIsGranted(other);
  }
}
