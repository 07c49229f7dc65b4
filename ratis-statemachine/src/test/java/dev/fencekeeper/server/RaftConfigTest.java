package dev.fencekeeper.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;

/** What a cluster config means to Ratis: the group, its peers, server and client properties. */
class RaftConfigTest {

  private static ClusterConfig named(String clusterName) {
    Properties p = ClusterConfig.localDefaults().toProperties();
    p.setProperty("cluster.name", clusterName);
    return ClusterConfig.fromProperties(p);
  }

  // The group id is a pure function of the cluster name, as specified, so every process agrees on
  // it.
  @Test
  void groupIdIsDeterministic() {
    RaftGroupId expected =
        RaftGroupId.valueOf(UUID.nameUUIDFromBytes("fencekeeper:fencekeeper".getBytes(UTF_8)));
    assertThat(RaftConfig.groupId(ClusterConfig.localDefaults())).isEqualTo(expected);
    assertThat(RaftConfig.groupId(ClusterConfig.forPeers("10.0.0.1:1"))).isEqualTo(expected);
    assertThat(RaftConfig.groupId(ClusterConfig.local(17000))).isEqualTo(expected);
    ClusterConfig other = named("other");
    assertThat(RaftConfig.groupId(other))
        .isNotEqualTo(expected)
        .isEqualTo(RaftConfig.groupId(named("other")));
    assertThat(RaftConfig.group(other).getGroupId()).isEqualTo(RaftConfig.groupId(other));
  }

  // Server properties carry this node's storage dir and port plus the documented Ratis settings.
  @Test
  void serverPropertiesForSelf() {
    ClusterConfig c =
        ClusterConfig.localDefaults().withNodeId("n2").withStorageDir(Path.of("/tmp/fk-n2"));
    RaftProperties p = RaftConfig.serverProperties(c);
    assertThat(RaftServerConfigKeys.storageDir(p)).containsExactly(Path.of("/tmp/fk-n2").toFile());
    assertThat(GrpcConfigKeys.Server.port(p)).isEqualTo(7302);
    assertThat(RaftServerConfigKeys.Read.option(p))
        .isEqualTo(RaftServerConfigKeys.Read.Option.LINEARIZABLE);
    assertThat(RaftServerConfigKeys.Snapshot.autoTriggerEnabled(p)).isTrue();
    assertThat(RaftServerConfigKeys.Snapshot.autoTriggerThreshold(p)).isEqualTo(10_000);
    assertThat(RaftServerConfigKeys.Snapshot.retentionFileNum(p)).isEqualTo(2);
    assertThat(RaftServerConfigKeys.Snapshot.triggerWhenStopEnabled(p)).isTrue();
    assertThat(RaftServerConfigKeys.Rpc.timeoutMin(p))
        .isEqualTo(TimeDuration.valueOf(400, TimeUnit.MILLISECONDS));
    assertThat(RaftServerConfigKeys.Rpc.timeoutMax(p))
        .isEqualTo(TimeDuration.valueOf(800, TimeUnit.MILLISECONDS));
    assertThat(RaftServerConfigKeys.Log.logMetadataEnabled(p)).isFalse();
    assertThat(GrpcConfigKeys.Server.port(RaftConfig.serverProperties(c.withNodeId("n3"))))
        .isEqualTo(7303);
  }

  // A server cannot be configured without knowing which peer it is.
  @Test
  void serverPropertiesRequireNodeId() {
    assertThatThrownBy(() -> RaftConfig.serverProperties(ClusterConfig.localDefaults()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("node.id: missing")
        .hasMessageContaining("n1");
  }

  // The Raft port listens on the node's own peer host unless `bind` says otherwise.
  @Test
  void serverPropertiesBindWhereTold() {
    ClusterConfig node = ClusterConfig.localDefaults().withNodeId("n2");
    assertThat(RaftConfig.serverProperties(node).get("raft.grpc.server.host"))
        .isEqualTo(node.self().host());
    assertThat(
            RaftConfig.serverProperties(node.withBindHost("0.0.0.0")).get("raft.grpc.server.host"))
        .isEqualTo("0.0.0.0");
  }

  // Client properties carry the request timeout and the raised async outstanding limit.
  @Test
  void clientProperties() {
    Properties props = ClusterConfig.localDefaults().toProperties();
    props.setProperty("client.request.timeout", "7s");
    RaftProperties p = RaftConfig.clientProperties(ClusterConfig.fromProperties(props));
    assertThat(RaftClientConfigKeys.Rpc.requestTimeout(p))
        .isEqualTo(TimeDuration.valueOf(7000, TimeUnit.MILLISECONDS));
    assertThat(RaftClientConfigKeys.Async.outstandingRequestsMax(p)).isEqualTo(1024);
  }

  // Raft peers mirror the configured ids and host:port addresses, in order.
  @Test
  void raftPeersMirrorPeers() {
    List<RaftPeer> peers = RaftConfig.peers(ClusterConfig.localDefaults());
    assertThat(peers)
        .extracting(RaftPeer::getId)
        .containsExactly(
            RaftPeerId.valueOf("n1"), RaftPeerId.valueOf("n2"), RaftPeerId.valueOf("n3"));
    assertThat(peers)
        .extracting(RaftPeer::getAddress)
        .containsExactly("127.0.0.1:7301", "127.0.0.1:7302", "127.0.0.1:7303");
  }

  // Without TLS files the parameters carry no TLS configuration: every channel is plaintext.
  @Test
  void parametersWithoutTlsAreEmpty() {
    assertThat(GrpcConfigKeys.TLS.conf(RaftConfig.parameters(ClusterConfig.localDefaults())))
        .isNull();
  }
}
