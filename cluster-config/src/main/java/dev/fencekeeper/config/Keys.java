package dev.fencekeeper.config;

import static dev.fencekeeper.config.ValueSyntax.LEASE_DURATION;
import static dev.fencekeeper.config.ValueSyntax.POSITIVE_INT;
import static dev.fencekeeper.config.ValueSyntax.TIMEOUT;

import dev.fencekeeper.config.ConfigKey.Bound;
import dev.fencekeeper.config.ConfigKey.Syntax;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Every key of a cluster's properties file, each defined here once, in the order {@link
 * ClusterConfig#store} writes them. docs/configuration.md is generated from this list ({@link
 * ConfigReference}).
 */
final class Keys {

  private static final List<ConfigKey<?>> DEFINED = new ArrayList<>();

  private static final Pattern CLUSTER_NAME_SYNTAX = Pattern.compile("[A-Za-z0-9._-]{1,64}");

  static final ConfigKey<String> CLUSTER_NAME =
      define(
          "cluster.name",
          ValueSyntax.TEXT,
          "fencekeeper",
          null,
          List.of(
              Bound.of(
                  name -> CLUSTER_NAME_SYNTAX.matcher(name).matches(),
                  "must match [A-Za-z0-9._-]{1,64}",
                  "[A-Za-z0-9._-]{1,64}")),
          "names the cluster and derives its Raft group id; the same on every node and client");
  static final ConfigKey<String> NODE_ID =
      define(
          "node.id",
          ValueSyntax.TEXT,
          null,
          "(none)",
          List.of(),
          "the peer this process runs as, one of the ids in peers; needed to run a server");
  static final ConfigKey<List<PeerAddress>> PEERS =
      define(
          "peers",
          ValueSyntax.PEERS,
          null,
          "(required on a node)",
          List.of(new Bound<>(PeerAddress::duplicateProblem, "distinct ids and addresses")),
          "every member, e.g. n1@10.0.0.1:7301,n2@10.0.0.2:7301,n3@10.0.0.3:7301");
  static final ConfigKey<List<PeerAddress>> ENDPOINTS =
      define(
          "endpoints",
          ValueSyntax.ENDPOINTS,
          null,
          "(from peers: Raft port + " + ClusterConfig.CLIENT_PORT_OFFSET + ")",
          List.of(new Bound<>(PeerAddress::duplicateProblem, "distinct addresses")),
          "for clients only: the nodes' client ports, e.g."
              + " 10.0.0.1:7501,10.0.0.2:7501,10.0.0.3:7501 (the command line's --endpoints or"
              + " FENCEKEEPER_ENDPOINTS); a client's file needs endpoints or peers, a node's file"
              + " (node.id) takes peers and not this");
  static final ConfigKey<Path> STORAGE_DIR =
      define(
          "storage.dir",
          ValueSyntax.PATH,
          null,
          "./data/<node.id> (./data without node.id)",
          List.of(),
          "the Raft log and snapshots; a node keeps it private to its user (mode 0700)");
  static final ConfigKey<Path> LOG_DIR =
      define(
          "log.dir",
          ValueSyntax.PATH,
          null,
          "(none: stderr)",
          List.of(),
          "where a node writes its rolling log file, fencekeeper.log (private to its user), instead"
              + " of logging to stderr");
  static final ConfigKey<Duration> LEASE_TTL_MIN =
      duration("lease.ttl.min", Duration.ofMillis(100), "shortest lease TTL a client may ask for");
  static final ConfigKey<Duration> LEASE_TTL_MAX =
      duration("lease.ttl.max", Duration.ofHours(1), "longest lease TTL a client may ask for");
  // A grace of zero would let any election cost a live holder its lease (docs/design.md, Time).
  static final ConfigKey<Duration> LEASE_TAKEOVER_GRACE =
      duration(
          "lease.takeover-grace",
          Duration.ofSeconds(2),
          "extension a new leader grants every live lease, capped by the lease's own TTL");
  static final ConfigKey<Integer> RESOURCE_NAME_MAX_BYTES =
      size("limits.resource-name.max-bytes", 256, "UTF-8 bytes of a resource (lock) name");
  static final ConfigKey<Integer> KEY_MAX_BYTES =
      size("limits.key.max-bytes", 512, "UTF-8 bytes of a protected value's key");
  static final ConfigKey<Integer> OWNER_MAX_BYTES =
      size("limits.owner.max-bytes", 256, "UTF-8 bytes of an owner label");
  static final ConfigKey<Integer> VALUE_MAX_BYTES =
      size(
          "limits.value.max-bytes",
          1 << 20,
          "bytes of one protected value, and of all values of one write together");
  static final ConfigKey<Integer> KEYS_PER_WRITE_MAX =
      count("limits.keys-per-write.max", 64, "keys one atomic write may change");
  static final ConfigKey<Integer> REQUEST_ID_MAX_BYTES =
      size("limits.request-id.max-bytes", 128, "UTF-8 bytes of a write's request id");
  static final ConfigKey<Integer> REQUEST_IDS_PER_LEASE_MAX =
      count(
          "limits.request-ids-per-lease.max",
          1024,
          "request ids remembered per lease for deduplication");
  static final ConfigKey<Duration> RESOURCES_IDLE_TIMEOUT =
      duration(
          "resources.idle-timeout",
          Duration.ofMinutes(10),
          "how long a resource with no lease, waiters or values is kept before it is forgotten");
  static final ConfigKey<Duration> LEASE_WAITER_LIVENESS =
      duration(
          "lease.waiter-liveness",
          Duration.ofSeconds(30),
          "how long a queued acquire stays eligible without its client re-sending it");
  static final ConfigKey<Integer> WAITERS_PER_RESOURCE_MAX =
      count("limits.waiters-per-resource.max", 1024, "queued acquires per resource");
  static final ConfigKey<Long> SNAPSHOT_AUTO_TRIGGER_ENTRIES =
      define(
          "snapshot.auto-trigger.entries",
          ValueSyntax.LONG,
          10_000L,
          null,
          List.of(ValueSyntax.POSITIVE_LONG),
          "log entries applied between two snapshots");
  // Above Ratis' 150/300 ms defaults: on a shared 2-core host a ~0.5 s stall flapped leadership
  // under load (docs/design.md, Ratis facts), and every spurious election costs a takeover grace.
  static final ConfigKey<Duration> ELECTION_TIMEOUT_MIN =
      timeout(
          "raft.election.timeout.min",
          Duration.ofMillis(400),
          "shortest wait for a leader's heartbeat before a follower starts an election");
  static final ConfigKey<Duration> ELECTION_TIMEOUT_MAX =
      timeout(
          "raft.election.timeout.max",
          Duration.ofMillis(800),
          "longest such wait, greater than the min; each wait is random in between");
  // Ratis 3.3.0's gRPC log appender can stop sending a follower entries for good; the node restarts
  // that follower's appender instead (docs/ratis-workarounds.md).
  static final ConfigKey<Duration> STUCK_FOLLOWER_RESTART_AFTER =
      define(
          "raft.stuck-follower.restart-after",
          ValueSyntax.DURATION,
          Duration.ofSeconds(20),
          null,
          List.of(
              Bound.of(d -> !d.isNegative(), "must not be negative", ">= 0"),
              ValueSyntax.WHOLE_MILLIS),
          "how long a leader's follower may answer INCONSISTENCY without its match index moving"
              + " before the leader restarts replicating to it; 0 leaves Ratis's own log appender"
              + " (docs/ratis-workarounds.md)");
  static final ConfigKey<Duration> CLIENT_REQUEST_TIMEOUT =
      timeout(
          "client.request.timeout", Duration.ofSeconds(3), "how long one client attempt may take");
  // A drill skews clocks by seconds or minutes; a bound keeps "now + offset" far from overflow.
  static final ConfigKey<Duration> CLOCK_OFFSET =
      define(
          "clock.offset",
          ValueSyntax.DURATION,
          Duration.ZERO,
          null,
          List.of(
              Bound.of(
                  d -> d.abs().compareTo(Duration.ofDays(1)) <= 0,
                  "is outside -24h..24h",
                  "-24h..24h")),
          "drills only: skews this node's leader clock");
  static final ConfigKey<Integer> METRICS_PORT =
      define(
          "metrics.port",
          ValueSyntax.PORT,
          0,
          null,
          List.of(
              Bound.of(
                  port -> port >= 0 && port <= 65535,
                  "must be in 0..65535 (0 disables)",
                  "0..65535")),
          "port of the HTTP /metrics and /health endpoint (always plaintext); 0 disables it");
  static final ConfigKey<String> BIND =
      host(
          "bind",
          "(own host)",
          "address the Raft port listens on: this node's host in peers unless set; 0.0.0.0 (or ::)"
              + " for every interface");
  static final ConfigKey<String> METRICS_BIND =
      host("metrics.bind", "(as bind)", "address the metrics endpoint listens on");
  // Not zero: under load a follower's applied index trails the commit index it last heard of by
  // the entries in flight, and a probe answering "not ready" then would take a healthy node out.
  static final ConfigKey<Integer> HEALTH_MAX_APPLY_LAG =
      define(
          "health.max-apply-lag",
          ValueSyntax.COUNT,
          5,
          null,
          List.of(ValueSyntax.atLeast(0, "must not be negative", ">= 0")),
          "log entries a node's applied index may trail the leader's commit index while /health"
              + " answers ready");
  // Seconds, not entries: under load a healthy follower is always some entries behind, and only
  // one that stops advancing for a while leaves the cluster with less redundancy than it shows.
  static final ConfigKey<Duration> HEALTH_MAX_FOLLOWER_LAG =
      timeout(
          "health.max-follower-lag",
          Duration.ofSeconds(10),
          "how long a follower may stay behind the leader's log without its match index advancing"
              + " before the leader reports it lagging (/health says redundancy degraded)");
  static final ConfigKey<Integer> CLIENT_PORT =
      define(
          "client.port",
          ValueSyntax.PORT,
          null,
          "(Raft port + " + ClusterConfig.CLIENT_PORT_OFFSET + ")",
          List.of(Bound.of(port -> port >= 1 && port <= 65535, "must be in 1..65535", "1..65535")),
          "port of this node's client protocol (gRPC service fencekeeper.v1.Fencekeeper, the same"
              + " TLS as the Raft port); other nodes and clients assume the default for every peer"
              + " they are not told otherwise about");
  static final ConfigKey<String> CLIENT_BIND =
      host("client.bind", "(as bind)", "address the client port listens on");
  static final ConfigKey<Integer> HTTP_PORT =
      define(
          "http.port",
          ValueSyntax.PORT,
          null,
          "(Raft port + " + ClusterConfig.HTTP_PORT_OFFSET + ")",
          List.of(
              Bound.of(
                  port -> port >= 0 && port <= 65535,
                  "must be in 0..65535 (0 turns the gateway off)",
                  "0..65535")),
          "port of this node's JSON gateway (the client protocol as JSON over HTTP, the same TLS as"
              + " the client port); 0 turns it off");
  static final ConfigKey<String> HTTP_BIND =
      host("http.bind", "(as bind)", "address the JSON gateway listens on");
  static final ConfigKey<Path> TLS_CERT =
      tlsFile("tls.cert", "PEM certificate chain of this process: mutual TLS on every channel");
  static final ConfigKey<Path> TLS_KEY = tlsFile("tls.key", "PKCS#8 PEM private key of tls.cert");
  static final ConfigKey<Path> TLS_TRUST =
      tlsFile("tls.trust", "PEM CA certificates trusted for peers and clients");
  static final ConfigKey<Set<String>> AUTHZ_ADMINS =
      cns(
          "authz.admins",
          Set.of(),
          "(none)",
          "certificate CNs that may run admin operations (TLS only)");
  static final ConfigKey<Set<String>> AUTHZ_NODES =
      cns(
          "authz.nodes",
          Set.of(Security.DEFAULT_NODE_CN),
          null,
          "certificate CNs that may act as cluster members (TLS only)");
  // Ratis's own default for raft.server.write.element-limit (Overload).
  static final ConfigKey<Integer> OVERLOAD_PENDING_WRITES_MAX =
      count(
          "overload.pending-writes.max",
          4096,
          "commands the leader holds between accepting and applying them; beyond: OVERLOADED");
  static final ConfigKey<Integer> KEYS_PER_RESOURCE_MAX =
      count("limits.keys-per-resource.max", 10_000, "protected values one resource may hold");
  static final ConfigKey<Integer> RESOURCES_MAX =
      count(
          "limits.resources.max",
          1_000_000,
          "resources the cluster keeps at once; an acquire creating one more: OVERLOADED");
  static final ConfigKey<Integer> WATCHES_PER_CLIENT_MAX =
      count(
          "limits.watches-per-client.max",
          1024,
          "watches one client identity may have waiting on a node at once: long-polls, Watch"
              + " streams and waiting Acquire calls, each kind counted on its own, through the"
              + " client port and the JSON gateway together");
  static final ConfigKey<Integer> REQUESTS_PER_BATCH_MAX =
      count(
          "limits.requests-per-batch.max",
          256,
          "commands a client may coalesce into one log entry");
  static final ConfigKey<Integer> OVERLOAD_PENDING_READS_MAX =
      count(
          "overload.pending-reads.max",
          4096,
          "reads (watches too) a node holds at once; beyond: OVERLOADED");
  static final ConfigKey<Integer> SESSIONS_PER_CLIENT_MAX =
      count(
          "limits.sessions-per-client.max",
          4096,
          "Session streams one client identity may hold open on the leader at once, through the"
              + " client port and the JSON gateway together, counted apart from its watches;"
              + " beyond: OVERLOADED");
  static final ConfigKey<Integer> STREAM_BUFFER_MAX =
      count(
          "limits.stream-buffer.max",
          10_000,
          "messages the node queues for one stream: a client that leaves more than this unread for"
              + " 2 s, or four times this at any moment, is cut off with OVERLOADED");

  /** Every key, in definition order. */
  static final List<ConfigKey<?>> ALL = List.copyOf(DEFINED);

  /** Every key's name, in definition order. */
  static final List<String> NAMES = ALL.stream().map(ConfigKey::name).toList();

  private static <T> ConfigKey<T> define(
      String name,
      Syntax<T> syntax,
      T defaultValue,
      String defaultDoc,
      List<Bound<T>> bounds,
      String doc) {
    ConfigKey<T> key = new ConfigKey<>(name, syntax, defaultValue, defaultDoc, bounds, doc);
    DEFINED.add(key);
    return key;
  }

  private static ConfigKey<Duration> duration(String name, Duration defaultValue, String doc) {
    return define(name, ValueSyntax.DURATION, defaultValue, null, LEASE_DURATION, doc);
  }

  private static ConfigKey<Duration> timeout(String name, Duration defaultValue, String doc) {
    return define(name, ValueSyntax.DURATION, defaultValue, null, TIMEOUT, doc);
  }

  private static ConfigKey<Integer> size(String name, int defaultValue, String doc) {
    return define(name, ValueSyntax.SIZE_BYTES, defaultValue, null, List.of(POSITIVE_INT), doc);
  }

  private static ConfigKey<Integer> count(String name, int defaultValue, String doc) {
    return define(name, ValueSyntax.COUNT, defaultValue, null, List.of(POSITIVE_INT), doc);
  }

  private static ConfigKey<String> host(String name, String defaultDoc, String doc) {
    return define(
        name,
        ValueSyntax.HOST,
        null,
        defaultDoc,
        List.of(
            Bound.of(
                PeerAddress::isHost,
                "is not a host name or IP address (e.g. 10.0.0.1, 0.0.0.0 for every interface, ::)",
                "host name or IP address")),
        doc);
  }

  private static ConfigKey<Path> tlsFile(String name, String doc) {
    return define(
        name,
        ValueSyntax.PATH,
        null,
        "(none)",
        List.of(),
        doc + "; tls.cert, tls.key and tls.trust go together");
  }

  private static ConfigKey<Set<String>> cns(
      String name, Set<String> defaultValue, String defaultDoc, String doc) {
    return define(
        name,
        ValueSyntax.CNS,
        defaultValue,
        defaultDoc,
        List.of(new Bound<>(Security::badCnProblem, "1..64 printable characters each, no comma")),
        doc);
  }

  private Keys() {}
}
