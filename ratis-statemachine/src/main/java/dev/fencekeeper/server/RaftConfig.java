package dev.fencekeeper.server;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.config.Security;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * The Ratis settings a {@link ClusterConfig} stands for: the group, its peers, the keys the config
 * maps onto Ratis's own, and the Ratis defaults fencekeeper overrides, each with the reason. Only
 * nodes (and tools that speak Raft) need these; the client's config holds no Ratis type.
 */
public final class RaftConfig {

  static final int LOG_CACHE_SEGMENTS = 2;
  static final long LOG_CACHE_MAX_BYTES = 64L << 20;
  // Ratis' default of 100 blocks callers long before the server is saturated (docs/design.md, Ratis
  // facts).
  static final int CLIENT_ASYNC_OUTSTANDING_MAX = 1024;
  // One to serve and one to fall back to if the newest turns out unreadable.
  static final int SNAPSHOT_RETENTION_FILES = 2;

  private RaftConfig() {}

  /**
   * The Raft group's id, derived from the cluster name, so every node computes the same id
   * independently.
   */
  public static RaftGroupId groupId(ClusterConfig config) {
    return RaftGroupId.valueOf(
        UUID.nameUUIDFromBytes(("fencekeeper:" + config.clusterName()).getBytes(UTF_8)));
  }

  /** The Raft members, as {@code peers} names them, in order. */
  public static List<RaftPeer> peers(ClusterConfig config) {
    return config.peers().stream()
        .map(peer -> RaftPeer.newBuilder().setId(peer.id()).setAddress(peer.address()).build())
        .toList();
  }

  /** The group of {@link #peers} under {@link #groupId}. */
  public static RaftGroup group(ClusterConfig config) {
    return RaftGroup.valueOf(groupId(config), peers(config));
  }

  /**
   * Ratis parameters for servers and Raft clients of this cluster: the mutual-TLS configuration for
   * every channel (server-to-server, client, admin); empty parameters without TLS.
   */
  public static Parameters parameters(ClusterConfig config) {
    Parameters p = new Parameters();
    Security.TlsFiles tls = config.security().tls();
    if (tls != null) {
      // mutual = true: a node requires a certificate from every caller, and a client presents its
      // own.
      GrpcConfigKeys.TLS.setConf(
          p,
          new GrpcTlsConfig(tls.key().toFile(), tls.cert().toFile(), tls.trust().toFile(), true));
    }
    return p;
  }

  /**
   * Ratis server properties for {@link ClusterConfig#self()}.
   *
   * @throws ConfigException if no node id is set
   */
  public static RaftProperties serverProperties(ClusterConfig config) {
    PeerAddress self = config.self();
    RaftProperties p = new RaftProperties();
    // Ratis' default is /tmp/raft-server, shared by every server that forgets to set it.
    RaftServerConfigKeys.setStorageDir(p, List.of(config.storageDir().toFile()));
    GrpcConfigKeys.Server.setPort(p, self.port());
    // Ratis listens on every interface unless given a host; the client and admin services share
    // this port (their own ports are unset), and their hosts are set too in case they ever get one.
    String host = config.bindHost();
    GrpcConfigKeys.Server.setHost(p, host);
    GrpcConfigKeys.Client.setHost(p, host);
    GrpcConfigKeys.Admin.setHost(p, host);
    // Ratis' DEFAULT answers reads from the leader's state without a quorum check: a deposed leader
    // could report a lease that has already been re-granted.
    RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, config.snapshotAutoTriggerEntries());
    // Ratis keeps every snapshot by default and the disk fills.
    RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, SNAPSHOT_RETENTION_FILES);
    // A snapshot at shutdown makes restarts replay less log; only effective with auto-trigger on.
    RaftServerConfigKeys.Snapshot.setTriggerWhenStopEnabled(p, true);
    RaftServerConfigKeys.Rpc.setTimeoutMin(p, millis(config.electionTimeoutMin()));
    RaftServerConfigKeys.Rpc.setTimeoutMax(p, millis(config.electionTimeoutMax()));
    // By default every advance of the commit index appends a METADATA entry: about two log entries
    // and fsyncs per command at low concurrency (docs/design.md, Ratis facts: about 2.2x writes
    // without). The cost of turning it off: a restarted node learns the commit index from the
    // leader instead of its own log, so it applies its entries only once a leader is elected, which
    // Raft requires anyway.
    RaftServerConfigKeys.Log.setLogMetadataEnabled(p, false);
    // Ratis keeps the entries of up to six closed 32 MB log segments in heap (up to 200 MB) so a
    // lagging follower can be fed without a disk read. Our state already holds every value those
    // entries wrote: at 1,000,000 keys the cache was a quarter of the heap (docs/benchmarks.md).
    // Two segments, at most LOG_CACHE_MAX_BYTES, still cover any follower a few seconds behind; one
    // further back reads the disk.
    RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, LOG_CACHE_SEGMENTS);
    RaftServerConfigKeys.Log.setSegmentCacheSizeMax(p, SizeInBytes.valueOf(LOG_CACHE_MAX_BYTES));
    // The state machine refuses commands beyond overload.pending-writes.max with OVERLOADED, one by
    // one. Ratis's own bound stays above it as a backstop only: its ResourceUnavailableException
    // fails every request of a client's ordered stream at once, accepted ones included
    // (docs/security.md).
    RaftServerConfigKeys.Write.setElementLimit(
        p,
        Math.max(
            RaftServerConfigKeys.Write.ELEMENT_LIMIT_DEFAULT,
            config.overload().maxPendingWrites() * 2));
    return p;
  }

  /**
   * Ratis client properties, for tools that talk to the Raft port directly (a Ratis client is
   * refused there unless it is a member): per-attempt request timeout and the async
   * outstanding-request cap.
   */
  public static RaftProperties clientProperties(ClusterConfig config) {
    RaftProperties p = new RaftProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, millis(config.requestTimeout()));
    RaftClientConfigKeys.Async.setOutstandingRequestsMax(p, CLIENT_ASYNC_OUTSTANDING_MAX);
    return p;
  }

  private static TimeDuration millis(Duration d) {
    return TimeDuration.valueOf(d.toMillis(), TimeUnit.MILLISECONDS);
  }
}
