package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Raft port serves peers only: commands, reads and admin calls enter a node through its client
 * port alone.
 */
class RaftPortPeersOnlyClusterTest {
  private static final String REFUSED = "Raft port, which serves only its peers";

  @TempDir Path dir;

  // Guarantee: a Ratis client pointed at the nodes' Raft ports can neither write, nor read state,
  // nor call Ratis's admin service, and nothing it sent is applied; the peers still replicate every
  // client-port command, and admin works over the client port.
  @Test
  void aRatisClientOnTheRaftPortCanNeitherWriteNorReadNorAdminister() throws Exception {
    try (TestCluster cluster = TestCluster.start(dir)) {
      String leader = cluster.awaitLeader();
      FencingClient client = cluster.newClient("door-check");
      long token = client.acquireToken("through-the-door", Duration.ofMinutes(5), "ok").token();
      client.write("through-the-door", token, "k", new byte[] {1});

      Message acquire =
          message(
              Request.newBuilder()
                  .setAcquire(
                      AcquireRequest.newBuilder()
                          .setResource("through-the-raft-port")
                          .setOwner("intruder")
                          .setTtlMs(60_000))
                  .build());
      Message lease =
          message(
              Request.newBuilder()
                  .setLease(LeaseQuery.newBuilder().setResource("through-the-door"))
                  .build());
      try (RaftClient raw =
          RaftClient.newBuilder()
              .setRaftGroup(RaftConfig.group(cluster.config()))
              .setProperties(RaftConfig.clientProperties(cluster.config()))
              .setLeaderId(RaftPeerId.valueOf(leader))
              .setRetryPolicy(RetryPolicies.noRetry())
              .build()) {
        assertThatThrownBy(() -> raw.io().send(acquire)).hasStackTraceContaining(REFUSED);
        assertThatThrownBy(() -> raw.io().sendReadOnly(lease)).hasStackTraceContaining(REFUSED);
        assertThatThrownBy(() -> raw.io().sendStaleRead(lease, 0, RaftPeerId.valueOf(leader)))
            .hasStackTraceContaining(REFUSED);
        assertThatThrownBy(
                () -> raw.getSnapshotManagementApi(RaftPeerId.valueOf(leader)).create(10_000))
            .hasStackTraceContaining(REFUSED);
      }

      assertThat(client.lease("through-the-raft-port").code()).isEqualTo(ResultCode.NOT_FOUND);
      try (FencingAdmin admin = FencingAdmin.connect(cluster.config())) {
        assertThat(admin.members()).hasSize(3);
        String follower =
            cluster.running().keySet().stream()
                .filter(id -> !id.equals(leader))
                .findFirst()
                .orElseThrow();
        assertThat(admin.snapshot(follower, Duration.ofSeconds(30))).isPositive();
      }
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

  private static Message message(Request request) {
    return Message.valueOf(UnsafeByteOperations.unsafeWrap(request.toByteArray()));
  }
}
