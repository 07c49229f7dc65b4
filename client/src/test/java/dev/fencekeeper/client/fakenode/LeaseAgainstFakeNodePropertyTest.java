package dev.fencekeeper.client.fakenode;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.Lease.LossReason;
import dev.fencekeeper.client.Lease.State;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * A real {@link Lease}, renewed by a real client's session against a fake node, under random
 * sequences of node pauses (the node answers nothing), kills (connections refused, then the node is
 * back), explicit renewals and revokes: {@code state()}, {@code isValid()} and {@code remaining()}
 * agree at every moment a concurrent reader looks, and the lease never counts itself valid once the
 * cluster has expired it. (LeaseViewPropertyTest checks the pure view on a fake clock; this checks
 * the lease as the client's threads drive it.)
 */
class LeaseAgainstFakeNodePropertyTest {
  private static final Duration TTL = Duration.ofMillis(300);

  enum Kind {
    WAIT, // time passes, the node answers normally
    PAUSE, // the node stalls: accepts calls, answers none (keep-alives included)
    KILL, // the node dies: connections refused, streams broken; back after the step
    RENEW, // the holder renews explicitly (not waited for)
    REVOKE // the cluster ends the lease
  }

  record Step(Kind kind, int millis) {}

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Kind> kind =
        Arbitraries.frequency(
            Tuple.of(3, Kind.WAIT),
            Tuple.of(2, Kind.PAUSE),
            Tuple.of(2, Kind.KILL),
            Tuple.of(2, Kind.RENEW),
            Tuple.of(1, Kind.REVOKE));
    // Up to a whole TTL: long enough for a pause or a kill to cost the lease.
    Arbitrary<Integer> millis = Arbitraries.integers().between(0, (int) TTL.toMillis());
    return Combinators.combine(kind, millis).as(Step::new).list().ofMinSize(1).ofMaxSize(6);
  }

  // Guarantee: at every moment state(), isValid() and remaining() of a lease agree (HELD or
  // AT_RISK exactly while valid, remaining() > 0 exactly while valid, LOST and CLOSED final), and
  // the lease is never valid once the cluster has expired it.
  @Property(tries = 8)
  void stateValidityAndRemainingAgreeAtEveryMoment(@ForAll("steps") List<Step> steps)
      throws InterruptedException {
    try (FakeCluster cluster = new FakeCluster();
        FakeNode node = FakeNode.start(cluster, "n1");
        FencingClient client =
            FencingClient.builder()
                .endpoints(node.address())
                .requestTimeout(Duration.ofMillis(150))
                .callTimeout(Duration.ofMillis(600))
                .unreachableTimeout(Duration.ofMillis(300))
                .closeTimeout(Duration.ofMillis(500))
                .build()) {
      Lease lease = client.acquire("r", TTL);
      List<LossReason> losses = new CopyOnWriteArrayList<>();
      lease.onLost(Runnable::run, losses::add);
      Sampler sampler = new Sampler(lease, cluster);
      sampler.thread.start();
      try {
        for (Step step : steps) {
          run(step, lease, node, cluster);
        }
      } finally {
        sampler.stopAndJoin();
      }
      assertThat(sampler.violation.get()).isNull();
      if (lease.state() == State.LOST) {
        Until.until(() -> !losses.isEmpty(), Duration.ofSeconds(1), "onLost called");
        assertThat(losses).as("one loss, told once").hasSize(1);
      }
    }
  }

  private static void run(Step step, Lease lease, FakeNode node, FakeCluster cluster)
      throws InterruptedException {
    switch (step.kind()) {
      case WAIT -> Thread.sleep(step.millis());
      case PAUSE -> {
        node.hang(true);
        Thread.sleep(step.millis());
        node.hang(false);
      }
      case KILL -> {
        node.stop();
        Thread.sleep(step.millis());
        node.resume();
      }
      case RENEW -> {
        lease.renewAsync();
        Thread.sleep(step.millis());
      }
      case REVOKE -> {
        cluster.revoke("r");
        Thread.sleep(step.millis());
      }
    }
  }

  /** Reads the lease's view over and over from a thread of its own; keeps the first violation. */
  private static final class Sampler implements Runnable {
    final Lease lease;
    final FakeCluster cluster;
    final AtomicReference<String> violation = new AtomicReference<>();
    final Thread thread = new Thread(this, "lease-sampler");
    volatile boolean running = true;
    boolean seenInvalid;

    Sampler(Lease lease, FakeCluster cluster) {
      this.lease = lease;
      this.cluster = cluster;
    }

    @Override
    public void run() {
      while (running && violation.get() == null) {
        sample();
        LockSupport.parkNanos(100_000);
      }
    }

    /**
     * One look, in this order: the cluster's expiry, isValid(), state(), remaining(), isValid().
     * The three are read at slightly different moments, so each rule compares them in the order
     * read, by the one fact that lets it: a lease that stopped being valid never is again.
     */
    private void sample() {
      boolean expiredOnCluster = cluster.expiredByTtl(lease.token());
      boolean validBefore = lease.isValid();
      State state = lease.state();
      Duration remaining = lease.remaining();
      boolean validAfter = lease.isValid();
      boolean live = state == State.HELD || state == State.AT_RISK;
      if (expiredOnCluster && validBefore) {
        fail("valid after the cluster expired it");
      }
      if (live && !validBefore) {
        fail(state + " after isValid() said false");
      }
      if (!live && validAfter) {
        fail("isValid() true after state() said " + state);
      }
      if (!live && !remaining.isZero()) {
        fail("remaining() " + remaining + " after state() said " + state);
      }
      if (!remaining.isZero() && (!validBefore || !live)) {
        fail("remaining() " + remaining + " while isValid() " + validBefore + ", " + state);
      }
      if (remaining.isZero() && validAfter) {
        fail("isValid() true after remaining() said zero");
      }
      if (remaining.compareTo(TTL) > 0) {
        fail("remaining() " + remaining + " exceeds the TTL");
      }
      if (remaining.isNegative()) {
        fail("remaining() negative: " + remaining);
      }
      if (seenInvalid && (validBefore || live)) {
        fail("valid again (" + state + ") after it was not");
      }
      seenInvalid |= !validAfter;
    }

    private void fail(String what) {
      violation.compareAndSet(null, what + " (lease " + lease + ")");
    }

    void stopAndJoin() throws InterruptedException {
      running = false;
      thread.join(2_000);
    }
  }
}
