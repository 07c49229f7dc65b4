package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.codahale.metrics.Timer;
import dev.fencekeeper.client.AcquireOptions;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.testing.TestCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a hand-off to a queued waiter costs the cluster besides its log entries: the waiter's
 * wake-up and its new lease's events come from the leader's applied events, with no read index (a
 * heartbeat round to the followers) on the way.
 */
@Timeout(120)
class HandOffReadsClusterTest {
  private static final String READ_TIMER = "clientReadRequest";
  private static final String STALE_READ_TIMER = "clientStaleReadRequest";

  @TempDir Path dataDir;
  TestCluster cluster;

  @BeforeEach
  void startCluster() {
    cluster = TestCluster.start(dataDir);
    cluster.awaitLeader();
  }

  @AfterEach
  void stopCluster() {
    cluster.close();
  }

  // Guarantee: a waiter learns of its grant, and the lease it takes follows its own events, without
  // one linearizable read: nothing of the hand-off waits for a read index.
  @Test
  void aWaiterTakesItsGrantAndFollowsItsLeaseWithoutALinearizableRead() throws Exception {
    FencingClient holder = cluster.newClient("holder");
    Result held = holder.acquireToken("handoff", Duration.ofSeconds(30), "holder");
    assertThat(held.code()).isEqualTo(ResultCode.GRANTED);
    FencingClient waiterClient = cluster.newClient("waiter");
    // The client asks for the cluster's limits (a linearizable read) at its first write: done here,
    // before the count starts.
    waiterClient.write("elsewhere", 1, "k", bytes("v"));
    long readsBefore = count(READ_TIMER);
    long staleBefore = count(STALE_READ_TIMER);

    CompletableFuture<Lease> waiting =
        waiterClient.acquireAsync(
            "handoff",
            Duration.ofSeconds(30),
            Duration.ofSeconds(60),
            AcquireOptions.defaults().owner("waiter"));
    await().atMost(Duration.ofSeconds(20)).until(() -> queued("handoff") == 1);
    // The waiter's watch is sent right after its acquire is answered WAITING: give it time to
    // arrive.
    Thread.sleep(500);
    assertThat(holder.release("handoff", held.token()).code()).isEqualTo(ResultCode.RELEASED);
    Lease lease = waiting.get(30, TimeUnit.SECONDS);
    assertThat(lease.write("k", "from the waiter").isAccepted()).isTrue();
    lease.close();
    // The lease's own watch is answered by its release; Ratis counts a read when it is answered.
    await().atMost(Duration.ofSeconds(20)).until(() -> count(STALE_READ_TIMER) - staleBefore >= 2);

    assertThat(count(READ_TIMER) - readsBefore)
        .as("linearizable reads during the hand-off")
        .isZero();
  }

  /** How many reads of the kind {@code timer} the nodes answered, all together. */
  private long count(String timer) {
    long total = 0;
    boolean found = false;
    for (var node : cluster.running().values()) {
      for (var e : node.metrics().registry().getTimers().entrySet()) {
        if (e.getKey().endsWith("." + timer)) {
          Timer t = e.getValue();
          total += t.getCount();
          found = true;
        }
      }
    }
    assertThat(found).as("Ratis's %s timer on the nodes", timer).isTrue();
    return total;
  }

  private int queued(String resource) {
    return cluster
        .running()
        .values()
        .iterator()
        .next()
        .stateMachine()
        .read(
            s ->
                s.resources().containsKey(resource)
                    ? s.resources().get(resource).waiters().size()
                    : 0);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
