package dev.fencekeeper.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.proto.FollowerProgress;
import dev.fencekeeper.statemachine.RestoreSeed;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Members that must be brought up to date by the leader: one that lost its storage and came back
 * the documented way (removed, started with {@code --join}, added) with an empty log, and one that
 * restarted while leadership moved back and forth. Each case ends with the follower applying what
 * the leader applied, within a bound. A member restarted on lost storage as a member, which Ratis's
 * own appender used to leave behind (docs/ratis-workarounds.md), is refused at start ({@code
 * ClusterIdentityClusterTest}). And a backup asked of a member that is behind.
 */
@Timeout(240)
class StuckFollowerClusterTest {
  private static final Duration CATCH_UP = Duration.ofSeconds(30);

  @TempDir Path dataDir;

  // Guarantee: a member whose storage was wiped, removed, started with --join and added again
  // while the leader keeps writing catches up with that leader's applied index, and the leader's
  // view of it shows it caught up, not lagging.
  @Test
  void aMemberBackOnWipedStorageCatchesUpWithTheLeader() throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir, settings())) {
      String leader = cluster.awaitLeader();
      FencingClient client = cluster.newClient("writer");
      String wiped = stopWipeAndRemoveAFollower(cluster, leader, client);
      writeRounds(client, "while-down", 10);

      try (Writer writer = Writer.start(client, "after")) {
        cluster.rejoin(wiped);
        awaitCaughtUp(cluster, leader, wiped);
      }
      // The leader's view of the follower shows it caught up, not lagging.
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                FollowerProgress seen = progressOf(client, leader, wiped);
                assertThat(seen.getLagging()).as("%s", seen).isFalse();
                assertThat(seen.getLagEntries()).as("%s", seen).isZero();
              });
    }
  }

  // Guarantee: a backup holds every write acknowledged before it was asked for, even when the
  // client asks a member that has not applied them (here one whose applies are held back): the
  // member sends the first call to the leader, which freezes the copy after a read barrier.
  @Test
  void aBackupAskedOfAMemberBehindHoldsEveryAcknowledgedWrite() throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir, settings())) {
      String leader = cluster.awaitLeader();
      FencingClient client = cluster.newClient("writer");
      String behind = follower(cluster, leader);
      cluster.stopNode(behind);
      CountDownLatch gate = new CountDownLatch(1);
      FencekeeperServer held = cluster.startHoldingApplies(behind, false, gate);
      try {
        Result grant = client.acquireToken("backed-up", Duration.ofMinutes(1), "w");
        Result written =
            client.write("backed-up", grant.token(), List.of(KeyChange.put("k", "v")), null);
        assertThat(written.code()).as(written.toString()).isEqualTo(ResultCode.ACCEPTED);
        long acknowledgedAt = cluster.lastApplied(leader);

        Path backup = dataDir.resolve("through-" + behind + ".backup");
        PeerAddress member =
            cluster.config().peers().stream().filter(a -> a.id().equals(behind)).findFirst().get();
        assertThat(held.stateMachine().getLastAppliedTermIndex().getIndex())
            .isLessThan(acknowledgedAt);
        try (FencingClient viaBehind = FencingClient.builder().peers(member.toString()).build()) {
          Result backedUp = viaBehind.backup(backup);
          assertThat(backedUp.code()).as(backedUp.toString()).isEqualTo(ResultCode.FOUND);
        }
        FencingState copy = RestoreSeed.read(backup, Limits.defaults());
        assertThat(new String(copy.read("backed-up", "k").value(), UTF_8))
            .as("the backed-up value of k")
            .isEqualTo("v");
      } finally {
        gate.countDown();
        held.close();
      }
    }
  }

  private static FollowerProgress progressOf(FencingClient client, String leader, String follower) {
    return Wire.nodeInfo(client, leader, Duration.ofSeconds(5)).getFollowersList().stream()
        .filter(f -> f.getId().equals(follower))
        .findFirst()
        .orElseThrow(() -> new AssertionError(leader + " reports no follower " + follower));
  }

  // Guarantee: the same, on an idle cluster: no new entry arrives after the wiped member is back.
  @Test
  void aMemberBackOnWipedStorageCatchesUpOnAnIdleCluster() {
    try (TestCluster cluster = TestCluster.start(dataDir, settings())) {
      String leader = cluster.awaitLeader();
      FencingClient client = cluster.newClient("writer");
      String wiped = stopWipeAndRemoveAFollower(cluster, leader, client);
      cluster.rejoin(wiped);
      awaitCaughtUp(cluster, leader, wiped);
    }
  }

  // Guarantee: leadership moved back and forth between two members while writes go on, and the
  // third member stopped and started again in between, does not leave the third member behind.
  @Test
  void leadershipMovedBackAndForthLeavesNoFollowerBehind() throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir, settings())) {
      cluster.awaitLeader();
      cluster.transferLeadership("n1");
      FencingClient client = cluster.newClient("writer");
      writeRounds(client, "before", 40);
      try (Writer writer = Writer.start(client, "steady")) {
        for (int round = 0; round < 4; round++) {
          cluster.transferLeadership(round % 2 == 0 ? "n2" : "n1");
          if (round == 1) {
            cluster.stopNode("n3");
            Thread.sleep(500);
            cluster.startNode("n3");
          }
          Thread.sleep(300);
        }
        awaitCaughtUp(cluster, "n1", "n3");
      }
    }
  }

  /**
   * The cluster's settings; {@code -Dstuck-follower.restart-after=0} runs the cluster on Ratis's
   * own log appender, without the workaround.
   */
  static Properties settings() {
    Properties p = new Properties();
    String restartAfter = System.getProperty("stuck-follower.restart-after");
    if (restartAfter != null) {
      p.setProperty("raft.stuck-follower.restart-after", restartAfter);
    }
    return p;
  }

  /**
   * After some writes, stops a follower that holds them all, deletes its storage and removes it
   * from the membership; returns its id.
   */
  private String stopWipeAndRemoveAFollower(
      TestCluster cluster, String leader, FencingClient client) {
    writeRounds(client, "before", 40);
    String wiped = follower(cluster, leader);
    awaitApplied(cluster, wiped, cluster.lastApplied(leader));
    cluster.stopWipeAndRemove(wiped);
    return wiped;
  }

  private static String follower(TestCluster cluster, String leader) {
    return List.of("n1", "n2", "n3").stream().filter(id -> !id.equals(leader)).findFirst().get();
  }

  private static void writeRounds(FencingClient client, String prefix, int rounds) {
    for (int i = 0; i < rounds; i++) {
      Result grant = client.acquireToken(prefix + "-" + (i % 5), Duration.ofSeconds(30), "w");
      assertThat(grant.code()).isEqualTo(ResultCode.GRANTED);
      client.release(prefix + "-" + (i % 5), grant.token());
    }
  }

  private static void awaitApplied(TestCluster cluster, String id, long index) {
    await().atMost(CATCH_UP).until(() -> cluster.lastApplied(id) >= index);
  }

  /** The follower applies at least what the leader had applied when this started, in time. */
  private static void awaitCaughtUp(TestCluster cluster, String leader, String follower) {
    long target = cluster.lastApplied(leader);
    await()
        .atMost(CATCH_UP)
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () ->
                assertThat(cluster.lastApplied(follower))
                    .as("%s applied, leader %s had applied %d", follower, leader, target)
                    .isGreaterThanOrEqualTo(target));
  }

  /** Acquires and releases in a loop on its own thread until closed: steady writes. */
  private static final class Writer implements AutoCloseable {
    private final ExecutorService thread = Executors.newSingleThreadExecutor();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Future<?> loop;

    private Writer(FencingClient client, String prefix) {
      this.loop =
          thread.submit(
              () -> {
                int i = 0;
                while (!stop.get()) {
                  String resource = prefix + "-" + (i++ % 5);
                  try {
                    Result grant = client.acquireToken(resource, Duration.ofSeconds(30), "w");
                    if (grant.code() == ResultCode.GRANTED) {
                      client.release(resource, grant.token());
                    }
                  } catch (RuntimeException retryDuringElection) {
                    // leadership moves during the test; the next round goes to the new leader
                  }
                }
              });
    }

    static Writer start(FencingClient client, String prefix) {
      return new Writer(client, prefix);
    }

    @Override
    public void close() throws Exception {
      stop.set(true);
      loop.get(30, TimeUnit.SECONDS);
      thread.shutdownNow();
    }
  }
}
