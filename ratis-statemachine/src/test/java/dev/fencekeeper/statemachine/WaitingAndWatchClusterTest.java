package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.Watch;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Blocking acquire, eager expiry and watches on three real nodes. */
@Timeout(150)
class WaitingAndWatchClusterTest {
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

  // Guarantee: five waiters are granted in arrival order, and a leader change in the middle keeps
  // that order (the queue is replicated state).
  @Test
  void fiveWaitersAreServedInOrderAcrossALeaderChange() throws Exception {
    FencingClient observer = cluster.newClient("observer");
    List<String> grantOrder = new CopyOnWriteArrayList<>(); // as the replicated log granted them
    Watch watch =
        Wire.watch(
            observer,
            "queue",
            false,
            Watch.FROM_NOW,
            e -> {
              if (e.getType() == LeaseEvent.Type.ACQUIRED) {
                grantOrder.add(e.getOwner());
              }
            });
    Thread.sleep(300);
    FencingClient holderClient = cluster.newClient("holder");
    Lease holder = holderClient.acquire("queue", Duration.ofSeconds(2));
    List<CompletableFuture<Lease>> waiting = new ArrayList<>();
    for (int i = 1; i <= 5; i++) {
      FencingClient c = cluster.newClient("w" + i);
      // TTL 15 s: a waiter must pick up its grant before it runs out, and right after a leadership
      // transfer on a loaded machine a client was seen to hear nothing for several seconds.
      waiting.add(
          c.acquireAsync(
              "queue",
              Duration.ofSeconds(15),
              Duration.ofSeconds(120),
              dev.fencekeeper.client.AcquireOptions.defaults().owner("w" + i)));
      // Arrival order is the order the acquires are logged in: wait for each to be queued.
      int expected = i;
      await().atMost(Duration.ofSeconds(10)).until(() -> queued("queue") >= expected);
    }
    holder.close();
    awaitLease(waiting.get(0)).close();
    Lease second = awaitLease(waiting.get(1));

    String leader = cluster.awaitLeader();
    String next =
        cluster.running().keySet().stream()
            .filter(id -> !id.equals(leader))
            .findFirst()
            .orElseThrow();
    cluster.transferLeadership(next);
    second.close();

    for (int i = 2; i < 5; i++) {
      awaitLease(waiting.get(i)).close();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> grantOrder.size() >= 6);
    watch.close();
    assertThat(grantOrder).containsExactly("holder", "w1", "w2", "w3", "w4", "w5");
  }

  // Guarantee: a queued waiter takes its grant from the ACQUIRED event that names its request id,
  // so a hand-off costs one log entry (the release that grants) rather than two (plus a re-sent
  // acquire), and the lease it holds ends locally no later than in the cluster.
  @Test
  void aWaiterTakesItsGrantFromTheEventWithoutAnotherLogEntry() throws Exception {
    FencingClient holderClient = cluster.newClient("holder");
    Lease holder = holderClient.acquire("handoff", Duration.ofSeconds(30));
    FencingClient waiterClient = cluster.newClient("waiter");
    CompletableFuture<Lease> waiting =
        waiterClient.acquireAsync("handoff", Duration.ofSeconds(10), Duration.ofSeconds(30));
    await().atMost(Duration.ofSeconds(10)).until(() -> queued("handoff") == 1);
    String leader = cluster.awaitLeader();
    long beforeRelease = cluster.lastApplied(leader);

    holder.close(); // the waiter re-sends its acquire only after a second: the release comes well
    // before
    Lease lease = waiting.get(10, TimeUnit.SECONDS);

    assertThat(lease.token()).isGreaterThan(holder.token());
    assertThat(cluster.lastApplied(leader) - beforeRelease)
        .as("log entries for the hand-off")
        .isEqualTo(1);
    Result inCluster = waiterClient.lease("handoff");
    assertThat(inCluster.token()).isEqualTo(lease.token());
    assertThat(lease.remaining())
        .isLessThanOrEqualTo(Duration.ofMillis(inCluster.expiresAtMs() - inCluster.nowMs()));
    lease.close();
  }

  /** The lease a waiter obtained; on timeout the failure shows the replicated queue. */
  private Lease awaitLease(CompletableFuture<Lease> waiting) throws Exception {
    try {
      return waiting.get(90, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      String state =
          cluster
              .running()
              .values()
              .iterator()
              .next()
              .stateMachine()
              .read(
                  s -> {
                    var r = s.resources().get("queue");
                    return "now=" + s.nowMs() + " lease=" + r.lease() + " waiters=" + r.waiters();
                  });
      throw new AssertionError("no lease within 90 s; " + state, e);
    }
  }

  // Guarantee: when a holder dies (no renewals, no release), the first waiter gets the resource
  // within the TTL plus a small bound, because the leader commits the expiry as soon as the lease
  // falls due.
  @Test
  void deadHolderIsReplacedByTheFirstWaiterSoonAfterItsTtl() throws Exception {
    FencingClient observer = cluster.newClient("observer");
    List<LeaseEvent> events = new CopyOnWriteArrayList<>();
    Watch watch = Wire.watch(observer, "job", false, Watch.FROM_NOW, events::add);
    Thread.sleep(300);
    FencingClient dying = cluster.newClient("dying");
    Lease dead = dying.acquire("job", Duration.ofSeconds(1));
    long acquiredAt = System.nanoTime();
    dead.abandon(); // as if its process were killed: nothing more reaches the cluster
    FencingClient waiterClient = cluster.newClient("waiter");
    Lease next = waiterClient.acquire("job", Duration.ofSeconds(5), Duration.ofSeconds(20));
    Duration elapsed = Duration.ofNanos(System.nanoTime() - acquiredAt);
    assertThat(next.token()).isGreaterThan(dead.token());
    // TTL 1 s; the expiry tick lands within tens of milliseconds and the waiter hears of it at once
    // through its watch. The bound leaves room for a loaded 2-core CI machine.
    assertThat(elapsed).isLessThan(Duration.ofMillis(1_800));

    // In state-machine time: from the end of the TTL to the grant, as every replica recorded it.
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> events.stream().anyMatch(e -> e.getToken() == next.token()));
    watch.close();
    LeaseEvent expired =
        events.stream()
            .filter(e -> e.getType() == LeaseEvent.Type.EXPIRED)
            .findFirst()
            .orElseThrow();
    LeaseEvent granted =
        events.stream().filter(e -> e.getToken() == next.token()).findFirst().orElseThrow();
    long expiryToGrantMs = granted.getAtMs() - expired.getExpiresAtMs();
    System.out.println(
        "expiry-to-grant delay: "
            + expiryToGrantMs
            + " ms; holder death to waiter's lease: "
            + elapsed.toMillis()
            + " ms");
    assertThat(expiryToGrantMs).isBetween(0L, 500L);
    next.close();
  }

  // Guarantee: a watch delivers every event in commit order, with no gap and no duplicate, across a
  // leader change and a client reconnect that resumes from the last position seen.
  @Test
  void watchHasNoGapsOrDuplicatesAcrossLeaderChangeAndReconnect() throws Exception {
    FencingClient watcherClient = cluster.newClient("watcher");
    List<LeaseEvent> seen = new CopyOnWriteArrayList<>();
    Watch watch = Wire.watch(watcherClient, "report-", true, Watch.FROM_NOW, seen::add);
    Thread.sleep(300); // let the watch learn its starting position

    FencingClient worker = cluster.newClient("worker");
    List<Long> tokens = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      Result grant = worker.acquireToken("report-" + (i % 2), Duration.ofSeconds(30), "worker");
      tokens.add(grant.token());
      worker.release("report-" + (i % 2), grant.token());
      if (i == 2) {
        String leader = cluster.awaitLeader();
        String next =
            cluster.running().keySet().stream()
                .filter(id -> !id.equals(leader))
                .findFirst()
                .orElseThrow();
        cluster.transferLeadership(next);
      }
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() >= 12);
    watch.close();
    long resumeFrom = watch.lastIndex();

    // A new client (a reconnect) resumes from the last index seen and gets only what came after.
    for (int i = 6; i < 8; i++) {
      Result grant = worker.acquireToken("report-0", Duration.ofSeconds(30), "worker");
      tokens.add(grant.token());
      worker.release("report-0", grant.token());
    }
    FencingClient reconnected = cluster.newClient("watcher-again");
    Watch resumed = Wire.watch(reconnected, "report-", true, resumeFrom, seen::add);
    await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() >= 16);
    resumed.close();
    Thread.sleep(200);

    assertThat(seen).hasSize(16);
    List<Long> acquired =
        seen.stream()
            .filter(e -> e.getType() == LeaseEvent.Type.ACQUIRED)
            .map(LeaseEvent::getToken)
            .toList();
    assertThat(acquired).isEqualTo(tokens);
    for (int i = 1; i < seen.size(); i++) {
      LeaseEvent a = seen.get(i - 1);
      LeaseEvent b = seen.get(i);
      assertThat(
              b.getIndex() > a.getIndex()
                  || (b.getIndex() == a.getIndex() && b.getSeq() > a.getSeq()))
          .as("event %s follows %s in commit order", b, a)
          .isTrue();
    }
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
}
