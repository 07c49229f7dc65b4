package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.NodeStatus;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A member whose client port is not its Raft port + 200, added by an admin that knows the cluster
 * by its client endpoints alone.
 */
@Timeout(120)
class AddMemberClientAddressClusterTest {
  @TempDir Path dataDir;

  // Guarantee: the join goes to the client address the admin call carries (not Raft port + 200),
  // the cluster reports that address for the new member, and an admin named by endpoints only (no
  // Raft peers) lists, adds and asks the member about itself.
  @Test
  void aMemberWithItsOwnClientPortIsAddedThroughEndpointsAlone() throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      ClusterConfig original = cluster.config();
      PeerAddress n4 = new PeerAddress("n4", "127.0.0.1", LocalPorts.freeNodePort());
      int n4ClientPort = LocalPorts.freePort();
      String n4Client = "127.0.0.1:" + n4ClientPort;
      List<PeerAddress> four = new ArrayList<>(original.peers());
      four.add(n4);
      ClusterConfig byEndpoints =
          ClusterConfig.forEndpoints(String.join(",", cluster.clientAddresses()));
      assertThat(byEndpoints.peers()).isEmpty();

      try (FencekeeperServer node =
              FencekeeperServer.join(
                  nodeConfig(original, four, "n4").withClientPort(n4ClientPort));
          FencingAdmin admin = FencingAdmin.connect(byEndpoints)) {
        assertThat(admin.members()).extracting(PeerAddress::id).containsExactly("n1", "n2", "n3");
        FencingAdmin.Membership after = admin.addMember(n4, n4Client);
        assertThat(after.members()).contains(n4);
        assertThat(admin.clientAddresses()).containsEntry("n4", n4Client);
        NodeStatus status = admin.nodeStatus("n4", Duration.ofSeconds(10));
        assertThat(status.id()).isEqualTo("n4");
      }
    }
  }

  // Guarantee: adding a member whose client port refuses connections (not started, or a wrong
  // address) fails within about a second, naming it, and changes nothing: the call asked of that
  // node alone does not wait out the admin timeout (30 s) retrying a refused connection.
  @Test
  void aNewMemberThatRefusesConnectionsIsReportedAtOnce() throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      PeerAddress n4 = new PeerAddress("n4", "127.0.0.1", LocalPorts.freeNodePort());
      String nobody = "127.0.0.1:" + LocalPorts.freePort();
      try (FencingAdmin admin = FencingAdmin.connect(cluster.config())) {
        long asked = System.nanoTime();
        FencingException refused =
            catchThrowableOfType(() -> admin.addMember(n4, nobody), FencingException.class);
        Duration took = Duration.ofNanos(System.nanoTime() - asked);
        assertThat(refused).isNotNull();
        assertThat(refused.code()).isEqualTo(ResultCode.UNAVAILABLE);
        assertThat(refused.result().message())
            .contains("cannot reach new member")
            .contains(nobody)
            .contains("refused every connection");
        assertThat(took).isLessThan(Duration.ofSeconds(5));
        assertThat(admin.members()).extracting(PeerAddress::id).containsExactly("n1", "n2", "n3");
      }
    }
  }

  /** Node {@code id} of the cluster as it will be ({@code peers}), with its own storage. */
  private ClusterConfig nodeConfig(ClusterConfig cluster, List<PeerAddress> peers, String id) {
    Properties p = cluster.toProperties();
    p.setProperty(
        "peers", peers.stream().map(PeerAddress::toString).collect(Collectors.joining(",")));
    p.setProperty("node.id", id);
    p.setProperty("storage.dir", dataDir.resolve(id).toString());
    return ClusterConfig.fromProperties(p);
  }
}
