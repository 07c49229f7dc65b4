package dev.fencekeeper.config;

import java.util.List;

/** Property names, in the order {@link ClusterConfig#store} writes them. */
final class Keys {
  static final String CLUSTER_NAME = "cluster.name";
  static final String NODE_ID = "node.id";
  static final String PEERS = "peers";
  static final String STORAGE_DIR = "storage.dir";
  static final String LEASE_TTL_MIN = "lease.ttl.min";
  static final String LEASE_TTL_MAX = "lease.ttl.max";
  static final String LEASE_TAKEOVER_GRACE = "lease.takeover-grace";
  static final String RESOURCE_NAME_MAX_BYTES = "limits.resource-name.max-bytes";
  static final String KEY_MAX_BYTES = "limits.key.max-bytes";
  static final String OWNER_MAX_BYTES = "limits.owner.max-bytes";
  static final String VALUE_MAX_BYTES = "limits.value.max-bytes";
  static final String KEYS_PER_WRITE_MAX = "limits.keys-per-write.max";
  static final String REQUEST_ID_MAX_BYTES = "limits.request-id.max-bytes";
  static final String REQUEST_IDS_PER_LEASE_MAX = "limits.request-ids-per-lease.max";
  static final String RESOURCES_IDLE_TIMEOUT = "resources.idle-timeout";
  static final String LEASE_WAITER_LIVENESS = "lease.waiter-liveness";
  static final String WAITERS_PER_RESOURCE_MAX = "limits.waiters-per-resource.max";
  static final String SNAPSHOT_AUTO_TRIGGER_ENTRIES = "snapshot.auto-trigger.entries";
  static final String ELECTION_TIMEOUT_MIN = "raft.election.timeout.min";
  static final String ELECTION_TIMEOUT_MAX = "raft.election.timeout.max";
  static final String CLIENT_REQUEST_TIMEOUT = "client.request.timeout";
  static final String CLOCK_OFFSET = "clock.offset";
  static final String METRICS_PORT = "metrics.port";
  static final String BIND = "bind";
  static final String METRICS_BIND = "metrics.bind";
  static final String TLS_CERT = "tls.cert";
  static final String TLS_KEY = "tls.key";
  static final String TLS_TRUST = "tls.trust";
  static final String AUTHZ_ADMINS = "authz.admins";
  static final String AUTHZ_NODES = "authz.nodes";
  static final String OVERLOAD_PENDING_WRITES_MAX = "overload.pending-writes.max";
  static final String OVERLOAD_PENDING_READS_MAX = "overload.pending-reads.max";
  static final String KEYS_PER_RESOURCE_MAX = "limits.keys-per-resource.max";
  static final String RESOURCES_MAX = "limits.resources.max";
  static final String WATCHES_PER_CLIENT_MAX = "limits.watches-per-client.max";
  static final String REQUESTS_PER_BATCH_MAX = "limits.requests-per-batch.max";

  static final List<String> ALL =
      List.of(
          CLUSTER_NAME,
          NODE_ID,
          PEERS,
          STORAGE_DIR,
          LEASE_TTL_MIN,
          LEASE_TTL_MAX,
          LEASE_TAKEOVER_GRACE,
          RESOURCE_NAME_MAX_BYTES,
          KEY_MAX_BYTES,
          OWNER_MAX_BYTES,
          VALUE_MAX_BYTES,
          KEYS_PER_WRITE_MAX,
          REQUEST_ID_MAX_BYTES,
          REQUEST_IDS_PER_LEASE_MAX,
          RESOURCES_IDLE_TIMEOUT,
          LEASE_WAITER_LIVENESS,
          WAITERS_PER_RESOURCE_MAX,
          SNAPSHOT_AUTO_TRIGGER_ENTRIES,
          ELECTION_TIMEOUT_MIN,
          ELECTION_TIMEOUT_MAX,
          CLIENT_REQUEST_TIMEOUT,
          CLOCK_OFFSET,
          METRICS_PORT,
          BIND,
          METRICS_BIND,
          TLS_CERT,
          TLS_KEY,
          TLS_TRUST,
          AUTHZ_ADMINS,
          AUTHZ_NODES,
          OVERLOAD_PENDING_WRITES_MAX,
          KEYS_PER_RESOURCE_MAX,
          RESOURCES_MAX,
          WATCHES_PER_CLIENT_MAX,
          REQUESTS_PER_BATCH_MAX,
          OVERLOAD_PENDING_READS_MAX);

  private Keys() {}
}
