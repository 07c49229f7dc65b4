package dev.fencekeeper.client.fakenode;

import static dev.fencekeeper.client.fakenode.Until.until;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.Lease.LossReason;
import dev.fencekeeper.client.Lease.State;
import dev.fencekeeper.proto.SessionRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The client's session against one fake node: keep-alives, a broken stream, and loss. */
class SessionTest {
  private final FakeCluster cluster = new FakeCluster();
  private final FakeNode node = FakeNode.start(cluster, "n1");
  private final FencingClient client =
      FencingClient.builder()
          .endpoints(node.address())
          .requestTimeout(Duration.ofMillis(500))
          .closeTimeout(Duration.ofSeconds(1))
          .build();
  private final List<LossReason> losses = new CopyOnWriteArrayList<>();
  private final List<State> states = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    client.close();
    node.close();
    cluster.close();
  }

  private Lease acquire(Duration ttl) {
    Lease lease = client.acquire("r", ttl);
    lease.onLost(Runnable::run, losses::add);
    lease.onStateChange(Runnable::run, states::add);
    return lease;
  }

  // Guarantee: the session's keep-alives alone keep a lease held on the cluster, TTL after TTL,
  // without any explicit renewal.
  @Test
  void keepAlivesKeepALeaseHeld() throws InterruptedException {
    // A TTL long enough that a loaded machine's scheduling stalls cannot cost it.
    Lease lease = acquire(Duration.ofMillis(1_200));

    long end = System.nanoTime() + Duration.ofMillis(3_000).toNanos();
    while (System.nanoTime() - end < 0) {
      assertThat(lease.isValid()).as("valid through keep-alives").isTrue();
      assertThat(cluster.liveToken("r")).as("held on the cluster").isEqualTo(lease.token());
      Thread.sleep(20);
    }
    assertThat(node.calls("KeepAlive")).hasSizeGreaterThanOrEqualTo(3);
    assertThat(node.calls("Renew")).isEmpty();
    assertThat(losses).isEmpty();
  }

  // Guarantee: a broken session stream is re-opened with the same session id, and the leases of
  // the session stay held through it: a broken stream is not a lost lease.
  @Test
  void aBrokenStreamIsReopenedWithTheSameIdAndTheLeaseStaysHeld() throws InterruptedException {
    Lease lease = acquire(Duration.ofMillis(1_200));
    until(() -> node.calls("SessionOpen").size() == 1, Duration.ofSeconds(2), "a session opened");

    node.breakSessions();
    until(
        () -> node.calls("SessionOpen").size() == 2, Duration.ofSeconds(2), "a session re-opened");
    Thread.sleep(2_500); // two TTLs: only the re-opened session's keep-alives can have renewed it

    List<String> ids =
        node.calls("SessionOpen").stream()
            .map(m -> ((SessionRequest) m).getOpen().getSessionId())
            .distinct()
            .toList();
    assertThat(ids).as("one session id").hasSize(1);
    assertThat(lease.isValid()).isTrue();
    assertThat(cluster.liveToken("r")).isEqualTo(lease.token());
    assertThat(losses).isEmpty();
  }

  // Guarantee: a lease the cluster ends (its expiry reported on the session) is LOST with
  // LEASE_LOST as soon as the client hears of it, long before its local deadline; onLost fires
  // once with that reason and the state listener hears LOST.
  @Test
  void aLeaseTheClusterEndsIsLostWithLeaseLost() {
    Lease lease = acquire(Duration.ofSeconds(30));
    until(() -> node.calls("SessionOpen").size() == 1, Duration.ofSeconds(2), "a session opened");

    cluster.advance(Duration.ofSeconds(31)); // the cluster's clock passes the lease's deadline

    until(() -> lease.state() == State.LOST, Duration.ofSeconds(3), "the lease LOST");
    until(() -> !losses.isEmpty(), Duration.ofSeconds(1), "onLost called");
    assertThat(losses).containsExactly(LossReason.LEASE_LOST);
    assertThat(states).containsExactly(State.LOST);
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.remaining()).isEqualTo(Duration.ZERO);
  }

  // Guarantee: when keep-alives go unanswered the lease turns AT_RISK, then LOST with
  // DEADLINE_PASSED, and never counts itself valid once the cluster has expired it: the local
  // deadline comes first.
  @Test
  void unansweredKeepAlivesLoseTheLeaseBeforeTheClusterExpiresIt() {
    Lease lease = acquire(Duration.ofMillis(900));
    node.dropKeepAlives(true);

    long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
    while (lease.state() != State.LOST && System.nanoTime() - end < 0) {
      boolean expiredOnCluster = cluster.expiredByTtl(lease.token()); // asked first
      if (expiredOnCluster) {
        assertThat(lease.isValid()).as("valid after the cluster expired it").isFalse();
      }
      LockSupport.parkNanos(200_000);
    }
    assertThat(lease.state()).isEqualTo(State.LOST);
    until(() -> !losses.isEmpty(), Duration.ofSeconds(1), "onLost called");
    assertThat(losses).containsExactly(LossReason.DEADLINE_PASSED);
    until(() -> states.contains(State.LOST), Duration.ofSeconds(1), "LOST told");
    assertThat(states).containsExactly(State.AT_RISK, State.LOST);
  }
}
