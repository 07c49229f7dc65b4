package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Leadership moving to a node whose wall clock is far off: the new leader continues the replicated
 * time line, so no lease ends early, no waiter is granted early, and the line stays on real time.
 * Three in-process nodes; the skewed one restarted with {@code clock.offset}.
 */
@Timeout(180)
class SkewedLeaderClusterTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration GRACE = Duration.ofSeconds(2); // lease.takeover-grace's default

  @TempDir Path dataDir;

  // Guarantee: a holder renewing every 3 s keeps its 10 s lease across a move of leadership to a
  // node 30 s ahead or behind, the waiter queued behind it is not granted while it renews, the new
  // leader's time line stays within seconds of real time, and its metric shows its clock's offset.
  @ParameterizedTest
  @ValueSource(longs = {30_000, -30_000})
  void aSkewedNewLeaderEndsNoLeaseEarly(long offsetMs) throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      String leader = cluster.awaitLeader();
      String skewed =
          cluster.running().keySet().stream()
              .filter(id -> !id.equals(leader))
              .findFirst()
              .orElseThrow();
      cluster.stopNode(skewed);
      cluster.startNode(skewed, c -> c.withClockOffsetMs(offsetMs));

      FencingClient holder = cluster.newClient("holder");
      FencingClient waiter = cluster.newClient("waiter");
      Result grant = holder.acquireToken("report", TTL, "holder");
      long grantedBy = System.nanoTime();
      assertThat(grant.code()).isEqualTo(ResultCode.GRANTED);
      long token = grant.token();
      CompletableFuture<Lease> waiting = waiter.acquireAsync("report", TTL, Duration.ofSeconds(90));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> cluster.lastApplied(skewed) >= cluster.lastApplied(leader));

      cluster.transferLeadership(skewed);
      // Renewed every 3 s until a second past the end the lease would have had without them (its
      // TTL after the grant, or the takeover grace after the move, whichever is later), so it is
      // current at the end only through renewals on the skewed leader.
      long unrenewedEnd = Math.max(grantedBy + TTL.toNanos(), System.nanoTime() + GRACE.toNanos());
      long pastUnrenewedEnd = unrenewedEnd + TimeUnit.SECONDS.toNanos(1);
      List<ResultCode> renewals = new ArrayList<>();
      for (long left = 0; left >= 0; left = pastUnrenewedEnd - System.nanoTime()) {
        TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.SECONDS.toNanos(3)));
        renewals.add(holder.renew("report", token, TTL).code());
      }

      assertThat(renewals).as("renewals after the move").containsOnly(ResultCode.RENEWED);
      assertThat(waiting).as("the waiter while the holder renews").isNotDone();
      assertThat(holder.validate("report", token).code()).isEqualTo(ResultCode.CURRENT);
      FencingStateMachine onSkewed = cluster.node(skewed).stateMachine();
      assertThat(onSkewed.leaderTimeMs()).isCloseTo(System.currentTimeMillis(), within(5_000L));
      assertThat(onSkewed.wallAheadOfTimeLineMs()).isCloseTo(offsetMs, within(5_000L));

      assertThat(holder.release("report", token).code()).isEqualTo(ResultCode.RELEASED);
      assertThat(waiting.get(20, TimeUnit.SECONDS).token()).isGreaterThan(token);
    }
  }
}
