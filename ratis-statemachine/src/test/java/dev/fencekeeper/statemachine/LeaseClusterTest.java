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
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's Lease handle: renewal, release, loss, and leader changes. The tests share one
 * cluster (each on a resource of its own, with a client of its own); the one that stops nodes
 * starts a cluster of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class LeaseClusterTest {
  @TempDir static Path dataDir;
  TestCluster cluster;
  FencingClient client;

  private static Properties settings() {
    Properties p = new Properties();
    p.setProperty("lease.takeover-grace", "1s");
    return p;
  }

  @BeforeAll
  void startCluster() {
    cluster = TestCluster.start(dataDir, settings());
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

  // A client per test: its metrics count that test's calls alone.
  @BeforeEach
  void connect() {
    client = cluster.newClient("holder");
  }

  @AfterEach
  void disconnect() {
    client.close();
  }

  // Guarantee: a held lease renews itself, so it outlives its TTL several times over and its writes
  // land. (The client renews every TTL/3, so a 1.5 s TTL outlasts a stall of the test JVM of up to
  // about 1 s, as the other fork's clusters can cause on two cores.)
  @Test
  void leaseRenewsInTheBackground() throws Exception {
    try (Lease lease = client.acquire("renewing", Duration.ofMillis(1500))) {
      Thread.sleep(4500);
      assertThat(lease.isValid()).isTrue();
      assertThat(lease.write("k", "v").isAccepted()).isTrue();
      assertThat(client.lease("renewing").token()).isEqualTo(lease.token());
    }
  }

  // Guarantee: closing a lease releases it, so another worker can acquire at once.
  @Test
  void closeReleases() {
    Lease lease = client.acquire("closed", Duration.ofSeconds(30));
    lease.close();
    Result next = cluster.newClient("other").acquireToken("closed", Duration.ofSeconds(5), "other");
    assertThat(next.code()).isEqualTo(ResultCode.GRANTED);
    assertThat(next.token()).isGreaterThan(lease.token());
  }

  // Guarantee: when the cluster says the lease is gone, the lost-listener fires exactly once.
  @Test
  void lostListenerFiresOnceWhenTheClusterEndsTheLease() {
    List<Lease.LossReason> losses = new CopyOnWriteArrayList<>();
    // A TTL long enough that the renewal after the release, not the local deadline, reports the
    // loss.
    Lease lease = client.acquire("released", Duration.ofSeconds(3));
    lease.onLost(losses::add);
    assertThat(client.release("released", lease.token()).code()).isEqualTo(ResultCode.RELEASED);
    await().atMost(Duration.ofSeconds(5)).until(() -> !losses.isEmpty());
    assertThat(losses).containsExactly(Lease.LossReason.LEASE_LOST);
    assertThat(lease.isValid()).isFalse();
    List<Lease.LossReason> late = new CopyOnWriteArrayList<>();
    lease.onLost(late::add); // registering after the loss is told at once, still once
    assertThat(late).containsExactly(Lease.LossReason.LEASE_LOST);
    lease.close();
    assertThat(losses).hasSize(1);
    assertThat(client.metrics().registry().counter("fencekeeper.client.leases.lost").getCount())
        .isEqualTo(1);
  }

  // Guarantee: an operator's revoke evicts the holder from anywhere: its next write is rejected,
  // its lost-listener fires once, and the resource can be acquired at once.
  @Test
  void revokeEvictsTheHolder() {
    List<Lease.LossReason> losses = new CopyOnWriteArrayList<>();
    Lease lease = client.acquire("stuck-job", Duration.ofSeconds(3));
    lease.onLost(losses::add);
    FencingClient operator = cluster.newClient("operator");
    assertThat(operator.revoke("stuck-job", "wedged").code()).isEqualTo(ResultCode.REVOKED);

    assertThat(lease.write("k", "late").code()).isEqualTo(ResultCode.LEASE_EXPIRED);
    Result next = operator.acquireToken("stuck-job", Duration.ofSeconds(5), "operator");
    assertThat(next.code()).isEqualTo(ResultCode.GRANTED);
    assertThat(lease.write("k", "later").code()).isEqualTo(ResultCode.STALE_TOKEN);
    await().atMost(Duration.ofSeconds(5)).until(() -> !losses.isEmpty());
    assertThat(losses).containsExactly(Lease.LossReason.LEASE_LOST);
  }

  // Guarantee: with no quorum to renew through, the holder learns of the loss by its own
  // conservative deadline, no later than one TTL after the last renewal it sent.
  @Test
  void localDeadlineEndsTheLeaseWithoutAQuorum(@TempDir Path ownDataDir) {
    // It stops two nodes: a cluster of its own, so the shared one keeps its quorum for the others.
    try (TestCluster own = TestCluster.start(ownDataDir, settings())) {
      own.awaitLeader();
      FencingClient holder = own.newClient("holder");
      List<Lease.LossReason> losses = new CopyOnWriteArrayList<>();
      Lease lease = holder.acquire("report", Duration.ofSeconds(1));
      lease.onLost(losses::add);
      String leader = own.awaitLeader();
      own.running().keySet().stream()
          .filter(id -> !id.equals(leader))
          .toList()
          .forEach(own::stopNode);
      long stoppedAt = System.nanoTime();
      await().atMost(Duration.ofSeconds(5)).until(() -> !losses.isEmpty());
      assertThat(Duration.ofNanos(System.nanoTime() - stoppedAt))
          .isLessThan(Duration.ofMillis(1500));
      assertThat(losses).containsExactly(Lease.LossReason.DEADLINE_PASSED);
      assertThat(lease.isValid()).isFalse();
    }
  }

  // Guarantee: leader changes are invisible to a renewing holder: its lease survives three
  // transfers in a row, and no loss is reported.
  @Test
  void renewingHolderSurvivesLeaderTransfers() {
    List<Lease.LossReason> losses = new CopyOnWriteArrayList<>();
    try (Lease lease = client.acquire("transferred", Duration.ofSeconds(2))) {
      lease.onLost(losses::add);
      for (int i = 0; i < 3; i++) {
        String leader = cluster.awaitLeader();
        String next =
            cluster.running().keySet().stream()
                .filter(id -> !id.equals(leader))
                .findFirst()
                .orElseThrow();
        cluster.transferLeadership(next);
      }
      assertThat(lease.isValid()).isTrue();
      assertThat(lease.write("after-transfers", "ok").isAccepted()).isTrue();
      assertThat(losses).isEmpty();
      // The client noticed the leader move (its renewals were answered by three different leaders).
      // Its renewals are its session's keep-alives (the default transport), timed as RENEW_SESSION.
      var registry = client.metrics().registry();
      assertThat(registry.counter("fencekeeper.client.leader.redirects").getCount())
          .isGreaterThanOrEqualTo(1);
      assertThat(registry.timer("fencekeeper.client.request.RENEW_SESSION.seconds").getCount())
          .isGreaterThanOrEqualTo(1);
      assertThat(registry.timer("fencekeeper.client.request.ACQUIRE.seconds").getCount())
          .isEqualTo(1);
    }
  }

  // Guarantee: a dead holder's lease still ends within TTL + grace of cluster time when elections
  // happen back to back, because a lease gets at most one takeover grace per renewal. Measured on
  // the cluster's time line (the stamps of the two grants): each new leader continues the line from
  // the last stamp it applied, so in real time every election may add the moments that stamp took
  // to reach it, never take any away.
  @Test
  void abandonedLeaseExpiresDespiteBackToBackLeaderChanges() {
    // A raw grant nobody renews: the holder has died.
    Result held = client.acquireToken("abandoned", Duration.ofSeconds(2), "dead-holder");
    assertThat(held.code()).isEqualTo(ResultCode.GRANTED);
    long heldAtMs = held.expiresAtMs() - held.ttlMs();
    long acquiredAt = System.nanoTime();
    FencingClient other = cluster.newClient("other");
    Result grant;
    int transfers = 0;
    do { // elections keep coming, before and after the TTL ends, until someone else gets the lease
      String leader = cluster.awaitLeader();
      String next =
          cluster.running().keySet().stream()
              .filter(id -> !id.equals(leader))
              .findFirst()
              .orElseThrow();
      cluster.transferLeadership(next);
      transfers++;
      grant = other.acquireToken("abandoned", Duration.ofSeconds(5), "other");
    } while (grant.code() != ResultCode.GRANTED
        && Duration.ofNanos(System.nanoTime() - acquiredAt).toSeconds() < 20);
    assertThat(grant.code()).isEqualTo(ResultCode.GRANTED);
    assertThat(transfers).isGreaterThan(3);
    long grantedAtMs = grant.expiresAtMs() - grant.ttlMs();
    // TTL 2 s + grace 1 s, plus one transfer's time (the next try comes after the next transfer)
    // and scheduling slack on a loaded 2-core machine.
    assertThat(grantedAtMs - heldAtMs).isLessThan(4_500);
    assertThat(grant.token()).isGreaterThan(held.token());
  }
}
