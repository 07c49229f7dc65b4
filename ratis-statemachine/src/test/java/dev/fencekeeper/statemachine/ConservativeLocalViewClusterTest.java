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
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A holder's own view of its lease never outlasts the cluster's. At every sample, the moment its
 * {@link Lease#remaining()} runs out is, in real time, no later than the expiry the cluster holds
 * for the lease (its time-line deadline, converted to real time through the leader's time line), so
 * {@link Lease#isValid()} turns false before the cluster could grant the resource to anyone else.
 * Sampled while leadership moves back and forth, while a node whose clock is 30 s off leads, while
 * renewals stall for want of a quorum, and while the cluster refuses commands as OVERLOADED.
 */
@Timeout(240)
class ConservativeLocalViewClusterTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final String RESOURCE = "report";

  @TempDir Path dataDir;

  // Guarantee: leader transfers, one after another, never leave the holder's view longer than the
  // cluster's.
  @Test
  void acrossLeaderChanges() throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      View view = View.start(cluster);
      for (int i = 0; i < 4; i++) {
        String leader = cluster.awaitLeader();
        cluster.transferLeadership(follower(cluster, leader));
        Thread.sleep(1_500);
      }
      view.finish(4);
    }
  }

  // Guarantee: a node whose wall clock is 30 s ahead, then one 30 s behind, taking over leaves the
  // holder's view no longer than the cluster's (the new leader continues the time line).
  @Test
  void underSkewedLeaders() throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      String leader = cluster.awaitLeader();
      List<String> others =
          cluster.running().keySet().stream().filter(id -> !id.equals(leader)).toList();
      cluster.stopNode(others.get(0));
      cluster.startNode(others.get(0), c -> c.withClockOffsetMs(30_000));
      cluster.stopNode(others.get(1));
      cluster.startNode(others.get(1), c -> c.withClockOffsetMs(-30_000));
      View view = View.start(cluster);
      for (String skewed : others) {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> cluster.lastApplied(skewed) >= cluster.lastApplied(leader));
        cluster.transferLeadership(skewed);
        view.awaitRenewalSentAfter(System.nanoTime());
      }
      view.finish(2);
    }
  }

  // Guarantee: renewals that find no quorum for a while (two of three nodes down from half a
  // renewal period before a renewal until a second after it, of a 24 s lease) leave the holder's
  // view no longer than the cluster's, before and after. The lease is longer than the others here
  // so that it outlives the outage, the nodes' restart and the elections after it on a loaded
  // machine: the test needs it renewed on both sides of the outage.
  @Test
  void whileRenewalsStall() throws Exception {
    Duration ttl = Duration.ofSeconds(24);
    long period = ttl.toNanos() / 3; // the session's renewal period
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      long started = System.nanoTime(); // before the session opens: its first renewal counts
      View view = View.start(cluster, ttl);
      long renewedAt = view.awaitRenewalSentAfter(started);
      sleepUntil(renewedAt + period / 2);
      String leader = cluster.awaitLeader();
      List<String> others =
          cluster.running().keySet().stream().filter(id -> !id.equals(leader)).toList();
      others.forEach(cluster::stopNode);
      sleepUntil(renewedAt + period + TimeUnit.SECONDS.toNanos(1)); // the next renewal stalls
      others.forEach(cluster::startNode);
      cluster.awaitLeader();
      long back = System.nanoTime();
      view.awaitRenewalSentAfter(back);
      view.awaitRenewalSentAfter(back + period); // sampled for a renewal period with the quorum
      view.finish(1);
    }
  }

  private static void sleepUntil(long nanos) throws InterruptedException {
    TimeUnit.NANOSECONDS.sleep(Math.max(0, nanos - System.nanoTime()));
  }

  // Guarantee: a leader that refuses excess commands as OVERLOADED, the holder's renewals among
  // them, leaves the holder's view no longer than the cluster's.
  @Test
  void whileTheClusterIsOverloaded() throws Exception {
    Properties p = new Properties();
    p.setProperty("overload.pending-writes.max", "2");
    try (TestCluster cluster = TestCluster.start(dataDir, p)) {
      View view = View.start(cluster);
      List<FencingClient> load = new ArrayList<>();
      for (int c = 0; c < 4; c++) {
        load.add(cluster.newClient("load-" + c));
      }
      int overloaded = 0;
      // Bursts until some were refused and a renewal sent a renewal period after they began came
      // through, so the keep-alive before it went out among them too.
      long renewalsAmongThemFrom = System.nanoTime() + TTL.toNanos() / 3;
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      for (int round = 0;
          overloaded == 0 || !view.renewedBySendAfter(renewalsAmongThemFrom);
          round++) {
        assertThat(System.nanoTime() - until)
            .as("time to see an OVERLOADED answer and a renewal among the bursts")
            .isNegative();
        List<CompletableFuture<Result>> burst = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
          burst.add(
              load.get(i % load.size())
                  .acquireTokenAsync("load-" + round + "-" + i, Duration.ofSeconds(5), "load"));
        }
        for (CompletableFuture<Result> f : burst) {
          if (f.join().code() == ResultCode.OVERLOADED) {
            overloaded++;
          }
        }
      }
      assertThat(overloaded).as("commands refused as OVERLOADED").isPositive();
      view.awaitRenewalSentAfter(renewalsAmongThemFrom);
      view.finish(1);
    }
  }

  private static String follower(TestCluster cluster, String leader) {
    return cluster.running().keySet().stream()
        .filter(id -> !id.equals(leader))
        .findFirst()
        .orElseThrow();
  }

  /**
   * A holder with a self-renewing lease, and a sampler comparing its view with the cluster's every
   * 20 ms until {@link #finish}.
   */
  private static final class View {
    private final TestCluster cluster;
    private final FencingClient observer;
    private final Lease lease;
    private final AtomicBoolean sampling = new AtomicBoolean(true);
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<Long> expiries = new CopyOnWriteArrayList<>();
    private final AtomicInteger compared = new AtomicInteger();
    private final Duration ttl;
    private final Thread sampler;

    private View(TestCluster cluster, Duration ttl) {
      this.cluster = cluster;
      this.ttl = ttl;
      this.observer = cluster.newClient("observer");
      this.lease = cluster.newClient("holder").acquire(RESOURCE, ttl);
      this.sampler = new Thread(this::sampleUntilFinished, "view-sampler");
      sampler.setDaemon(true);
      sampler.start();
    }

    static View start(TestCluster cluster) {
      return start(cluster, TTL);
    }

    static View start(TestCluster cluster, Duration ttl) {
      return new View(cluster, ttl);
    }

    private void sampleUntilFinished() {
      while (sampling.get()) {
        sampleOnce();
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    /**
     * One comparison. The holder's deadline is taken first and rounded up (the wall clock read
     * after {@code remaining()}); the cluster's expiry is read after it and can only have grown
     * since, so every error leans toward a violation, not away from one.
     */
    private void sampleOnce() {
      Duration remaining = lease.remaining();
      long holderDeadlineWallMs = System.currentTimeMillis() + remaining.toMillis() + 1;
      if (!lease.isValid()) {
        return;
      }
      String leader = cluster.leader().orElse(null);
      if (leader == null) {
        return;
      }
      Result shown = observer.lease(RESOURCE);
      if (shown.code() == ResultCode.UNAVAILABLE || shown.code() == ResultCode.OVERLOADED) {
        return; // no leader answered: nothing to compare with
      }
      if (!shown.live() || shown.token() != lease.token()) {
        violations.add(
            "the cluster shows "
                + shown
                + " while the holder's view runs "
                + remaining.toMillis()
                + " ms more");
        return;
      }
      var node = cluster.node(leader);
      if (node == null || !cluster.leader().map(leader::equals).orElse(false)) {
        return;
      }
      long lineAheadOfWallMs = node.stateMachine().leaderTimeMs() - System.currentTimeMillis();
      long clusterExpiryWallMs = shown.expiresAtMs() - lineAheadOfWallMs;
      expiries.add(shown.expiresAtMs());
      compared.incrementAndGet();
      if (holderDeadlineWallMs > clusterExpiryWallMs) {
        violations.add(
            "holder's view ends at "
                + holderDeadlineWallMs
                + ", "
                + (holderDeadlineWallMs - clusterExpiryWallMs)
                + " ms after the cluster's expiry "
                + clusterExpiryWallMs
                + " (time line "
                + lineAheadOfWallMs
                + " ms ahead of the wall clock, leader "
                + leader
                + ")");
      }
    }

    /**
     * Whether the holder's deadline shows a renewal sent after {@code sinceNanos}. The client
     * counts a TTL from a renewal's send, less a margin, so a renewal sent earlier leaves the
     * deadline short of {@code sinceNanos} + TTL.
     */
    boolean renewedBySendAfter(long sinceNanos) {
      long now = System.nanoTime(); // read first: the deadline comes out no later than it is
      return now + lease.remaining().toNanos() - (sinceNanos + ttl.toNanos()) >= 0;
    }

    /**
     * Waits until a renewal sent after {@code sinceNanos} has come through and the sampler has
     * compared the views a few times since; returns about when the latest renewal was sent (the
     * session's next one is due a third of the TTL later).
     */
    long awaitRenewalSentAfter(long sinceNanos) {
      await().atMost(Duration.ofSeconds(30)).until(() -> renewedBySendAfter(sinceNanos));
      long now = System.nanoTime();
      long sentAt = now + lease.remaining().toNanos() - ttl.toNanos() + ttl.toNanos() / 1_000;
      int target = compared.get() + 25;
      await().atMost(Duration.ofSeconds(30)).until(() -> compared.get() >= target);
      return sentAt;
    }

    /** Stops sampling and checks: no violation, and the lease renewed through it all. */
    void finish(int minimumDistinctExpiries) throws InterruptedException {
      sampling.set(false);
      sampler.join(5_000);
      assertThat(violations)
          .as("samples where the holder's view outlasted the cluster's")
          .isEmpty();
      assertThat(expiries.stream().distinct().count())
          .as("renewals seen by the samples")
          .isGreaterThanOrEqualTo(minimumDistinctExpiries + 1);
      assertThat(lease.isValid()).as("the holder's lease after the disturbance").isTrue();
      lease.close();
    }
  }
}
