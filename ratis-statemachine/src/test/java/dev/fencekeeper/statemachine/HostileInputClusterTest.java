package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.server.RaftConfig;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile requests, sent as raw Ratis messages (no fencekeeper client to tidy them up) as commands
 * and as reads, against three real nodes: no node crashes, the cluster keeps serving, and
 * afterwards every replica's state digest is identical at the same applied index.
 */
class HostileInputClusterTest {
  private static final int REQUESTS = 400;

  @TempDir Path dir;

  @Test
  void hostileRequestsLeaveEveryReplicaIdenticalAndServing() throws Exception {
    try (TestCluster cluster = TestCluster.start(dir)) {
      cluster.awaitLeader();
      FencingClient fencing = cluster.newClient("fuzz-check");
      long token = fencing.acquireToken("r1", Duration.ofMinutes(5), "fuzz-check").token();
      fencing.write("r1", token, "k1", new byte[] {1});

      List<byte[]> requests =
          HostileInputPropertiesTest.hostileRequestBytes().sampleStream().limit(REQUESTS).toList();
      try (RaftClient raw =
          RaftClient.newBuilder()
              .setRaftGroup(RaftConfig.group(cluster.config()))
              .setProperties(RaftConfig.clientProperties(cluster.config()))
              .setRetryPolicy(
                  RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                      20, TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
              .build()) {
        List<CompletableFuture<?>> sent = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
          Message m = Message.valueOf(UnsafeByteOperations.unsafeWrap(requests.get(i)));
          // Refusals before the log come back as plain exceptions; only that they come back
          // matters.
          sent.add(
              (i % 3 == 0 ? raw.async().sendReadOnly(m) : raw.async().send(m))
                  .handle((r, e) -> null));
        }
        CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
      }

      assertThat(cluster.running()).hasSize(3);
      for (var node : cluster.running().values()) {
        assertThat(
                node.raftServer()
                    .getDivision(RaftConfig.groupId(cluster.config()))
                    .getInfo()
                    .isAlive())
            .isTrue();
      }
      assertThat(fencing.acquireToken("after-fuzz", Duration.ofSeconds(30), "fuzz-check").code())
          .isEqualTo(ResultCode.GRANTED);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  cluster.running().values().stream()
                          .map(n -> n.stateMachine().digest())
                          .distinct()
                          .count()
                      == 1);
    }
  }
}
