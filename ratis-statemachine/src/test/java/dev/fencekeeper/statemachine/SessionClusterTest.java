package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's session (the client protocol's default transport): one stream keeps every lease of a
 * client alive with one log entry per keep-alive, brings their ends back within about a second, and
 * outlives leader changes. The tests share one cluster, each on resources of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(240)
class SessionClusterTest {
  @TempDir static Path dataDir;
  TestCluster cluster;

  @BeforeAll
  void startCluster() {
    cluster = TestCluster.start(dataDir);
    cluster.awaitLeader();
  }

  @AfterAll
  void stopCluster() {
    cluster.close();
  }

  private FencingClient newClient(String owner) {
    return FencingClient.builder().config(cluster.config()).owner(owner).build();
  }

  private static List<Lease> acquireAll(FencingClient client, String prefix, int n, Duration ttl) {
    List<CompletableFuture<Lease>> pending = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      pending.add(client.acquireAsync(prefix + i, ttl));
    }
    List<Lease> leases = new ArrayList<>();
    for (CompletableFuture<Lease> f : pending) {
      leases.add(f.join());
    }
    return leases;
  }

  private long leaderApplied() {
    return cluster.lastApplied(cluster.awaitLeader());
  }

  // Guarantee: one client holds 2,000 leases for two TTLs (12 s) and more, every one valid
  // throughout, and the log grows by about one entry per renewal period for all of them together
  // (not one per lease and period).
  @Test
  void oneClientHoldsTwoThousandLeasesWithOneEntryPerRenewal() throws InterruptedException {
    Duration ttl = Duration.ofSeconds(6);
    long periodMs = ttl.toMillis() / 3;
    try (FencingClient client = newClient("many")) {
      List<Lease> leases = acquireAll(client, "many-", 2000, ttl);
      ConcurrentLinkedQueue<String> lost = new ConcurrentLinkedQueue<>();
      for (Lease lease : leases) {
        lease.onLost(reason -> lost.add(lease.resource() + ": " + reason));
      }
      // Let the acquires' entries settle before counting.
      Thread.sleep(periodMs);
      long from = leaderApplied();
      long start = System.nanoTime();
      Duration hold = ttl.multipliedBy(2);
      while (System.nanoTime() - start < hold.toNanos()) {
        long invalid = leases.stream().filter(l -> !l.isValid()).count();
        assertThat(invalid).as("leases no longer valid").isZero();
        Thread.sleep(500);
      }
      long grown = leaderApplied() - from;
      long periods = hold.toMillis() / periodMs;
      assertThat(lost).isEmpty();
      assertThat(leases).allMatch(Lease::isValid);
      // One keep-alive entry per period, plus the leader's own entries (ticks); per-lease renewals
      // would cost thousands.
      assertThat(grown)
          .as("log entries over %d renewal periods", periods)
          .isLessThan(3 * periods + 20);
      Result onCluster = client.lease("many-1999");
      assertThat(onCluster.live()).isTrue();
      assertThat(onCluster.token()).isEqualTo(leases.get(1999).token());
    }
  }

  // Guarantee: a lease abandoned by a callback that runs as its acquire completes (before the
  // client's own bookkeeping after the hand-over) is not renewed by the session: it ends by its
  // TTL and a waiter on another client gets it.
  @Test
  void aLeaseAbandonedAsItIsHandedOverEndsByItsTtl() {
    try (FencingClient holder = newClient("let-go");
        FencingClient waiter = newClient("after-let-go")) {
      Lease abandoned =
          holder
              .acquireAsync("let-go", Duration.ofSeconds(1))
              .thenApply(
                  lease -> {
                    lease.abandon();
                    return lease;
                  })
              .join();
      Lease next = waiter.acquire("let-go", Duration.ofSeconds(5), Duration.ofSeconds(10));
      assertThat(next.token()).isGreaterThan(abandoned.token());
      next.close();
    }
  }

  // Guarantee: a revoke reaches the holder's onLost within about a second, through the session's
  // events (its next keep-alive would be ten seconds away).
  @Test
  void aRevokeReachesOnLostWithinASecond() throws InterruptedException {
    try (FencingClient holder = newClient("holder");
        FencingClient operator = newClient("operator")) {
      Lease lease = holder.acquire("revoked-1", Duration.ofSeconds(30));
      // The session opens with the first lease and renews at once; past that, the next keep-alive
      // is ten seconds away, so only the revoke's event can tell the holder in time.
      Thread.sleep(2000);
      AtomicLong lostAt = new AtomicLong();
      lease.onLost(reason -> lostAt.set(System.nanoTime()));
      assertThat(operator.revoke("revoked-1", "test").code()).isEqualTo(ResultCode.REVOKED);
      long revokedAt = System.nanoTime();
      await().atMost(Duration.ofSeconds(5)).until(() -> lostAt.get() != 0);
      assertThat(Duration.ofNanos(lostAt.get() - revokedAt)).isLessThan(Duration.ofMillis(1500));
      assertThat(lease.isValid()).isFalse();
      assertThat(lease.state()).isEqualTo(Lease.State.LOST);
    }
  }

  // Guarantee: a leadership transfer and then a stopped leader, both during the session, keep
  // every lease: the session is re-opened on the new leader and renews them there, more than once.
  @Test
  void leaderChangesKeepTheSessionsLeases() throws InterruptedException {
    Duration ttl = Duration.ofSeconds(6);
    try (FencingClient client = newClient("failover")) {
      List<Lease> leases = acquireAll(client, "failover-", 50, ttl);
      ConcurrentLinkedQueue<String> lost = new ConcurrentLinkedQueue<>();
      for (Lease lease : leases) {
        lease.onLost(reason -> lost.add(lease.resource() + ": " + reason));
      }
      String first = cluster.awaitLeader();
      String next = first.equals("n1") ? "n2" : "n1";
      cluster.transferLeadership(next);
      awaitTwoRenewalsSentAfter(System.nanoTime(), leases, lost);
      assertThat(lost).isEmpty();
      assertThat(leases).allMatch(Lease::isValid);

      cluster.stopNode(next);
      try {
        long stoppedAt = System.nanoTime();
        cluster.awaitLeader();
        awaitTwoRenewalsSentAfter(stoppedAt, leases, lost);
        assertThat(lost).isEmpty();
        assertThat(leases).allMatch(Lease::isValid);
        for (Lease lease : List.of(leases.get(0), leases.get(49))) {
          Result onCluster = client.lease(lease.resource());
          assertThat(onCluster.live()).isTrue();
          assertThat(onCluster.token()).isEqualTo(lease.token());
        }
      } finally {
        cluster.startNode(next);
      }
    }
  }

  /**
   * Waits until every lease was renewed by a keep-alive sent after {@code sinceNanos}, and then
   * again by a later one; fails at once when a lease is lost meanwhile.
   */
  private static void awaitTwoRenewalsSentAfter(
      long sinceNanos, List<Lease> leases, ConcurrentLinkedQueue<String> lost) {
    long firstSeenAt = awaitRenewalSentAfter(sinceNanos, leases, lost);
    awaitRenewalSentAfter(firstSeenAt, leases, lost);
  }

  /**
   * Waits until every lease shows a renewal sent after {@code sinceNanos}: the client counts a TTL
   * from a renewal's send, less a margin, so a renewal sent earlier leaves a deadline short of
   * {@code sinceNanos} + TTL. Returns when that was seen.
   */
  private static long awaitRenewalSentAfter(
      long sinceNanos, List<Lease> leases, ConcurrentLinkedQueue<String> lost) {
    await()
        .atMost(Duration.ofSeconds(30))
        .failFast("a lease was lost", () -> !lost.isEmpty())
        .until(
            () ->
                leases.stream()
                    .allMatch(
                        l -> {
                          long now = System.nanoTime(); // first: the deadline comes out early
                          long deadline = now + l.remaining().toNanos();
                          return deadline - (sinceNanos + l.ttl().toNanos()) >= 0;
                        }));
    return System.nanoTime();
  }
}
