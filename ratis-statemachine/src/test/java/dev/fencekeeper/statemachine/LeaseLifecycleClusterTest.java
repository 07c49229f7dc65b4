package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.ConnectionState;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.proto.ListEntry;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's lease lifecycle: no lease outlives the caller that gave up on it, nothing blocks for
 * good. The tests share one cluster (each on resources of its own, with clients of its own); the
 * one that stops every node starts a cluster of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class LeaseLifecycleClusterTest {
  @TempDir static Path dataDir;
  TestCluster cluster;
  FencingClient client;
  FencingClient other;

  @BeforeAll
  void startCluster() {
    cluster = TestCluster.start(dataDir);
    cluster.awaitLeader();
    // One round trip before any test times one: the first calls after a start pay for warming up.
    try (FencingClient warmUp = FencingClient.connect(cluster.config(), "warm-up")) {
      warmUp.acquire("warm-up", Duration.ofSeconds(5)).close();
    }
  }

  @AfterAll
  void stopCluster() {
    cluster.close();
  }

  // Fresh clients per test: a listener one test leaves stalled on a client's executor must not
  // delay the next test's.
  @BeforeEach
  void connect() {
    client = cluster.newClient("holder");
    other = cluster.newClient("other");
  }

  @AfterEach
  void disconnect() {
    client.close();
    other.close();
  }

  private int waiters(String resource) {
    for (ListEntry e : Wire.response(other.listLeases(resource, "", 10)).getEntriesList()) {
      if (e.getResource().equals(resource)) {
        return e.getWaiters();
      }
    }
    return 0;
  }

  private boolean freeForOthers(String resource) {
    Result r = other.acquireToken(resource, Duration.ofSeconds(5), "other");
    if (r.code() == ResultCode.GRANTED) {
      other.release(resource, r.token());
      return true;
    }
    return false;
  }

  // Guarantee: a grant that arrives after the caller cancelled its acquire is released at once, so
  // the resource does not stay held for a TTL by nobody.
  @Test
  void grantArrivingAfterCancelIsReleased() {
    CompletableFuture<Lease> acquiring = client.acquireAsync("late", Duration.ofSeconds(60));
    acquiring.cancel(true);
    await().atMost(Duration.ofSeconds(5)).until(() -> freeForOthers("late"));
  }

  // Guarantee: the same for a caller that bounded its wait with orTimeout.
  @Test
  void grantArrivingAfterTimeoutIsReleased() {
    CompletableFuture<Lease> acquiring =
        client
            .acquireAsync("late-timeout", Duration.ofSeconds(60))
            .orTimeout(1, TimeUnit.MILLISECONDS);
    await().atMost(Duration.ofSeconds(5)).until(acquiring::isDone);
    await().atMost(Duration.ofSeconds(5)).until(() -> freeForOthers("late-timeout"));
  }

  // Guarantee: cancelling the future of a waiting acquire gives its place in line up (CancelWait),
  // so the cluster does not keep, and later grant, a waiter nobody listens to.
  @Test
  void cancellingAWaitingAcquireGivesThePlaceUp() {
    Lease holder = client.acquire("queue", Duration.ofSeconds(60));
    FencingClient waiterClient = cluster.newClient("waiter");
    CompletableFuture<Lease> waiting =
        waiterClient.acquireAsync("queue", Duration.ofSeconds(60), Duration.ofSeconds(60));
    await().atMost(Duration.ofSeconds(10)).until(() -> waiters("queue") == 1);
    waiting.cancel(true);
    // Well inside the cluster's waiter-liveness window: only a CancelWait empties the queue this
    // soon.
    await().atMost(Duration.ofSeconds(3)).until(() -> waiters("queue") == 0);
    holder.close();
    await().atMost(Duration.ofSeconds(3)).until(() -> freeForOthers("queue"));
  }

  // Guarantee: a thread blocked in a waiting acquire ends when interrupted, keeps its interrupt
  // status, and its place in line is given up.
  @Test
  void interruptEndsABlockingAcquireAndGivesThePlaceUp() throws Exception {
    Lease holder = client.acquire("interrupted", Duration.ofSeconds(60));
    FencingClient waiterClient = cluster.newClient("waiter");
    AtomicReference<Throwable> outcome = new AtomicReference<>();
    AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
    Thread blocked =
        new Thread(
            () -> {
              try {
                waiterClient.acquire("interrupted", Duration.ofSeconds(60), Duration.ofSeconds(60));
              } catch (RuntimeException e) {
                outcome.set(e);
              }
              stillInterrupted.set(Thread.currentThread().isInterrupted());
            });
    blocked.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> waiters("interrupted") == 1);
    blocked.interrupt();
    blocked.join(5_000);
    assertThat(blocked.isAlive()).as("still blocked after the interrupt").isFalse();
    assertThat(outcome.get()).isInstanceOf(CancellationException.class);
    assertThat(stillInterrupted.get()).isTrue();
    await().atMost(Duration.ofSeconds(3)).until(() -> waiters("interrupted") == 0);
    holder.close();
  }

  // Guarantee: closing the client releases every lease it still holds, within a bound, so the next
  // worker need not wait out their TTLs.
  @Test
  void closingTheClientReleasesItsLeases() {
    FencingClient closing = cluster.newClient("closing");
    closing.acquire("held-1", Duration.ofSeconds(60));
    closing.acquire("held-2", Duration.ofSeconds(60));
    long start = System.nanoTime();
    closing.close();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    assertThat(freeForOthers("held-1")).isTrue();
    assertThat(freeForOthers("held-2")).isTrue();
  }

  // Guarantee: a revoke reaches the holder promptly (its lease's own events), not at its next
  // renewal a third of the TTL later; the lease is invalid by the time its listener runs.
  @Test
  void revokeIsNoticedWithinAboutASecond() {
    Lease lease = client.acquire("revoked", Duration.ofSeconds(30));
    AtomicReference<Long> noticedAt = new AtomicReference<>();
    AtomicReference<Boolean> validWhenTold = new AtomicReference<>();
    lease.onLost(
        reason -> {
          validWhenTold.set(lease.isValid());
          noticedAt.set(System.nanoTime());
        });
    long sentAt = System.nanoTime();
    assertThat(other.revoke("revoked", "test").code()).isEqualTo(ResultCode.REVOKED);
    long answeredAt = System.nanoTime();
    await().atMost(Duration.ofSeconds(8)).until(() -> noticedAt.get() != null);
    // From sending the revoke: an upper bound of the delay from its commit (docs/java-client.md
    // quotes it).
    long delayMs = (noticedAt.get() - sentAt) / 1_000_000;
    System.out.println(
        "revoke noticed by the holder "
            + delayMs
            + " ms after the revoke was sent (answered after "
            + (answeredAt - sentAt) / 1_000_000
            + " ms)");
    assertThat(delayMs).isLessThan(2_000);
    assertThat(validWhenTold.get()).isFalse();
  }

  // Guarantee: tryAcquire hands back the same self-renewing Lease as acquire when the resource is
  // free, and nothing (no exception) when it is held.
  @Test
  void tryAcquireReturnsARenewingLeaseOrNothing() throws Exception {
    Optional<Lease> got = client.tryAcquire("try", Duration.ofSeconds(2));
    assertThat(got).isPresent();
    Thread.sleep(3_000); // past the TTL by half of it: only renewals keep it
    assertThat(got.get().isValid()).isTrue();
    assertThat(got.get().write("k", "v").isAccepted()).isTrue();
    assertThat(other.tryAcquire("try", Duration.ofSeconds(5))).isEmpty();
    got.get().close();
    Optional<Lease> next = other.tryAcquire("try", Duration.ofSeconds(5));
    assertThat(next).isPresent();
    assertThat(next.get().token()).isGreaterThan(got.get().token());
    next.get().close();
  }

  // Guarantee: a slow or throwing loss listener runs on its own executor and delays no renewal:
  // another lease of the same client, with a TTL shorter than the listener's stall, stays held
  // throughout.
  @Test
  void slowAndThrowingListenersDelayNoRenewal() throws Exception {
    Lease victim = client.acquire("victim", Duration.ofSeconds(30));
    Lease bystander = client.acquire("bystander", Duration.ofSeconds(2));
    List<Lease.LossReason> bystanderLosses = new CopyOnWriteArrayList<>();
    bystander.onLost(bystanderLosses::add);
    CountDownLatch slowStarted = new CountDownLatch(1);
    CountDownLatch throwerRan = new CountDownLatch(1);
    AtomicReference<String> ranOn = new AtomicReference<>();
    ExecutorService own =
        Executors.newSingleThreadExecutor(r -> new Thread(r, "application-listener"));
    try {
      victim.onLost(
          reason -> {
            slowStarted.countDown();
            try {
              Thread.sleep(8_000);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      victim.onLost(
          own,
          reason -> {
            ranOn.set(Thread.currentThread().getName());
            throwerRan.countDown();
            throw new IllegalStateException("a listener that fails");
          });
      assertThat(other.revoke("victim", "test").code()).isEqualTo(ResultCode.REVOKED);
      assertThat(slowStarted.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(throwerRan.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(ranOn.get()).isEqualTo("application-listener");
      // 4 s, two of the bystander's TTLs, while the listener stalls
      for (int i = 0; i < 40; i++) {
        assertThat(bystander.isValid()).as("bystander valid after %d ms", i * 100).isTrue();
        Thread.sleep(100);
      }
      assertThat(bystanderLosses).isEmpty();
      assertThat(bystander.write("k", "v").isAccepted()).isTrue();
      bystander.close();
    } finally {
      own.shutdownNow();
    }
  }

  // Guarantee: closeAsync releases and completes once the cluster answered; the resource is free
  // then.
  @Test
  void closeAsyncReleases() throws Exception {
    Lease lease = client.acquire("close-async", Duration.ofSeconds(60));
    lease.closeAsync().get(10, TimeUnit.SECONDS);
    assertThat(lease.state()).isEqualTo(Lease.State.CLOSED);
    assertThat(lease.isValid()).isFalse();
    assertThat(freeForOthers("close-async")).isTrue();
  }

  // Guarantee: an abandoned lease is left to expire: closing the client does not release it.
  @Test
  void closingTheClientLeavesAbandonedLeasesToExpire() {
    FencingClient closing = cluster.newClient("closing");
    Lease abandoned = closing.acquire("abandoned", Duration.ofSeconds(60));
    abandoned.abandon();
    closing.close();
    Result held = other.lease("abandoned");
    assertThat(held.live()).isTrue();
    assertThat(held.token()).isEqualTo(abandoned.token());
  }

  // Guarantee: with the cluster gone, a lease turns AT_RISK while still valid, then LOST by its
  // deadline; the client reports DISCONNECTED, and CONNECTED again once the nodes are back.
  @Test
  void atRiskBeforeLostAndConnectionStateFollowTheCluster(@TempDir Path ownDataDir) {
    // It stops every node: a cluster of its own, so the shared one stays up for the others.
    TestCluster own = TestCluster.start(ownDataDir);
    own.awaitLeader();
    FencingClient watched =
        FencingClient.builder()
            .config(own.config())
            .owner("watched")
            .unreachableTimeout(Duration.ofSeconds(1))
            .build();
    try {
      List<ConnectionState> connection = new CopyOnWriteArrayList<>();
      watched.onConnectionStateChange(Runnable::run, connection::add);
      Lease lease = watched.acquire("at-risk", Duration.ofSeconds(3));
      assertThat(watched.connectionState()).isEqualTo(ConnectionState.CONNECTED);
      List<Lease.State> states = new CopyOnWriteArrayList<>();
      List<Boolean> validWhenAtRisk = new CopyOnWriteArrayList<>();
      lease.onStateChange(
          Runnable::run,
          state -> {
            states.add(state);
            if (state == Lease.State.AT_RISK) {
              validWhenAtRisk.add(lease.isValid());
            }
          });
      own.stopAll();
      await().atMost(Duration.ofSeconds(10)).until(() -> states.contains(Lease.State.LOST));
      assertThat(states).containsSubsequence(Lease.State.AT_RISK, Lease.State.LOST);
      assertThat(validWhenAtRisk).first().isEqualTo(true);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> connection.contains(ConnectionState.DISCONNECTED));
      for (String id : List.of("n1", "n2", "n3")) {
        own.startNode(id);
      }
      own.awaitLeader();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> watched.lease("at-risk").code() != ResultCode.UNAVAILABLE);
      // The session stream reconnects with backoff after the outage, on a loaded machine slowly.
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> connection.get(connection.size() - 1) == ConnectionState.CONNECTED);
    } finally {
      watched.close();
      own.close();
    }
  }
}
