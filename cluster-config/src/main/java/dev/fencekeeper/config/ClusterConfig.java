package dev.fencekeeper.config;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.CharacterCodingException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * The whole description of one fencekeeper cluster, and optionally which member this process is.
 * Immutable and always valid: every way of obtaining one (file, {@link Properties}, factories,
 * {@code with*} copies) runs the same checks and fails with a {@link ConfigException} that names
 * the offending key and value.
 *
 * <p>Properties file keys, all optional except {@code peers}:
 *
 * <pre>
 * cluster.name                      fencekeeper      also derives the Raft group id
 * node.id                           (none)           this process's peer id; needed to run a server
 * peers                             (required)       n1@10.0.0.1:7301,n2@10.0.0.2:7301,...
 * storage.dir                       ./data/&lt;node.id&gt; (./data without node.id)
 * lease.ttl.min / lease.ttl.max     100ms / 1h
 * lease.takeover-grace              2s
 * limits.resource-name.max-bytes    256
 * limits.key.max-bytes              512
 * limits.owner.max-bytes            256
 * limits.value.max-bytes            1048576          sizes also accept KiB / MiB suffixes
 * limits.keys-per-write.max         64
 * limits.request-id.max-bytes       128
 * limits.request-ids-per-lease.max  1024
 * limits.waiters-per-resource.max   1024
 * limits.keys-per-resource.max      10000
 * limits.resources.max              1000000          an acquire creating one more: OVERLOADED
 * limits.watches-per-client.max     1024             waiting watches per client identity, per node
 * limits.requests-per-batch.max     256              commands a client may coalesce into one log entry
 * snapshot.auto-trigger.entries     10000
 * raft.election.timeout.min / max   400ms / 800ms
 * client.request.timeout            3s
 * clock.offset                      0ms              drills only: skews this node's leader clock
 * metrics.port                      0                0 disables the HTTP metrics endpoint (always plaintext)
 * bind                              (own host)       address the Raft port listens on; default: this node's host
 *                                                    in peers; 0.0.0.0 (or ::) for every interface
 * metrics.bind                      (as bind)        address the metrics endpoint listens on
 * tls.cert / tls.key / tls.trust    (none)           PEM certificate, PKCS#8 key, trusted CA: mutual TLS on
 *                                                    every Raft, client and admin channel; all three or none
 * authz.admins                      (none)           certificate CNs that may run admin operations (TLS only)
 * authz.nodes                       fencekeeper-node certificate CNs that may act as cluster members (TLS only)
 * overload.pending-writes.max       4096             commands the leader holds at once; beyond: OVERLOADED
 * overload.pending-reads.max        4096             reads (watches too) a node holds at once; beyond: OVERLOADED
 * </pre>
 *
 * <p>Durations are written as in {@link Durations}: {@code 250ms}, {@code 5s}, {@code 2m}, {@code
 * 1h}.
 */
public final class ClusterConfig {

  public static final int DEFAULT_BASE_PORT = 7301;

  /** The prefix of the environment variables that {@link #load(Path, Map)} reads. */
  public static final String ENVIRONMENT_PREFIX = "FENCEKEEPER_";

  static final String DEFAULT_CLUSTER_NAME = "fencekeeper";
  static final Path DEFAULT_STORAGE_ROOT = Path.of("./data");
  static final long DEFAULT_SNAPSHOT_AUTO_TRIGGER_ENTRIES = 10_000;
  static final int LOG_CACHE_SEGMENTS = 2;
  static final long LOG_CACHE_MAX_BYTES = 64L << 20;
  // Above Ratis' 150/300 ms defaults: on a shared 2-core host a ~0.5 s stall flapped leadership
  // under load (docs/design.md, Ratis facts), and every spurious election costs a takeover grace.
  static final Duration DEFAULT_ELECTION_TIMEOUT_MIN = Duration.ofMillis(400);
  static final Duration DEFAULT_ELECTION_TIMEOUT_MAX = Duration.ofMillis(800);
  static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(3);
  // Ratis' default of 100 blocks callers long before the server is saturated (docs/design.md, Ratis
  // facts).
  static final int CLIENT_ASYNC_OUTSTANDING_MAX = 1024;
  // One to serve and one to fall back to if the newest turns out unreadable.
  static final int SNAPSHOT_RETENTION_FILES = 2;
  // A drill skews clocks by seconds or minutes; a bound keeps "now + offset" far from overflow.
  static final long MAX_CLOCK_OFFSET_MS = Duration.ofDays(1).toMillis();

  private static final Pattern CLUSTER_NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  private static final Pattern SIZE = Pattern.compile("([+-]?\\d+)\\s*(KiB|MiB)?");
  private static final Pattern WHOLE_NUMBER = Pattern.compile("[+-]?\\d+");
  private static final String PEERS_EXAMPLE =
      "n1@127.0.0.1:7301,n2@127.0.0.1:7302,n3@127.0.0.1:7303";

  private final String clusterName;
  private final List<PeerAddress> peers;
  private final String nodeId; // null: this config does not say which member we are
  private final Path explicitStorageDir; // null: derived from node.id, so withNodeId moves it too
  private final Limits limits;
  private final long snapshotAutoTriggerEntries;
  private final Duration electionTimeoutMin;
  private final Duration electionTimeoutMax;
  private final Duration requestTimeout;
  private final long clockOffsetMs;
  private final int metricsPort;
  private final String bindHost; // null: the node's own host from peers
  private final String metricsBindHost; // null: the same as the Raft port's
  private final Security security;
  private final RaftGroupId groupId;

  private ClusterConfig(
      String clusterName,
      List<PeerAddress> peers,
      String nodeId,
      Path explicitStorageDir,
      Limits limits,
      long snapshotAutoTriggerEntries,
      Duration electionTimeoutMin,
      Duration electionTimeoutMax,
      Duration requestTimeout,
      long clockOffsetMs,
      int metricsPort,
      String bindHost,
      String metricsBindHost,
      Security security) {
    this.clusterName = checkClusterName(clusterName);
    this.peers = checkPeers(peers);
    this.nodeId = checkNodeId(nodeId, this.peers);
    this.explicitStorageDir = explicitStorageDir;
    this.limits = Objects.requireNonNull(limits, "limits");
    this.snapshotAutoTriggerEntries = snapshotAutoTriggerEntries;
    if (snapshotAutoTriggerEntries <= 0) {
      throw new ConfigException(
          Keys.SNAPSHOT_AUTO_TRIGGER_ENTRIES
              + ": '"
              + snapshotAutoTriggerEntries
              + "' must be positive");
    }
    this.electionTimeoutMin = positive(Keys.ELECTION_TIMEOUT_MIN, electionTimeoutMin);
    this.electionTimeoutMax = positive(Keys.ELECTION_TIMEOUT_MAX, electionTimeoutMax);
    // Ratis randomises each election timeout within [min, max); an empty range means colliding
    // candidates keep splitting the vote.
    if (electionTimeoutMax.compareTo(electionTimeoutMin) <= 0) {
      throw new ConfigException(
          Keys.ELECTION_TIMEOUT_MAX
              + ": '"
              + Durations.describe(electionTimeoutMax)
              + "' must be greater than "
              + Keys.ELECTION_TIMEOUT_MIN
              + " '"
              + Durations.describe(electionTimeoutMin)
              + "'");
    }
    this.requestTimeout = positive(Keys.CLIENT_REQUEST_TIMEOUT, requestTimeout);
    this.clockOffsetMs = checkClockOffset(clockOffsetMs);
    this.metricsPort = checkMetricsPort(metricsPort, this.nodeId, this.peers);
    this.bindHost = bindHost == null ? null : PeerAddress.checkHost(Keys.BIND, bindHost);
    this.metricsBindHost =
        metricsBindHost == null ? null : PeerAddress.checkHost(Keys.METRICS_BIND, metricsBindHost);
    this.security = Objects.requireNonNull(security, "security");
    this.groupId =
        RaftGroupId.valueOf(
            UUID.nameUUIDFromBytes(("fencekeeper:" + this.clusterName).getBytes(UTF_8)));
  }

  // ---------------------------------------------------------------------------------------------
  // Factories

  /**
   * Reads a properties file (UTF-8) and validates it as {@link #fromProperties} does. A key given
   * twice is an error: the last-one-wins rule of {@link Properties} hides edits made in the wrong
   * place.
   *
   * @throws ConfigException naming the file if it cannot be read, and the file plus the key and
   *     value if it is invalid
   */
  public static ClusterConfig load(Path file) {
    Properties p = readFile(file);
    try {
      return fromProperties(p);
    } catch (ConfigException e) {
      throw new ConfigException(file + ": " + e.getMessage(), e);
    }
  }

  /**
   * The file's properties, unvalidated; unreadable files and keys set twice are errors naming the
   * file.
   */
  private static Properties readFile(Path file) {
    DuplicateRejectingProperties p = new DuplicateRejectingProperties();
    try (Reader in = Files.newBufferedReader(file, UTF_8)) {
      p.load(in);
    } catch (CharacterCodingException e) {
      throw new ConfigException(file + ": not valid UTF-8 (" + e + ")", e);
    } catch (IOException e) {
      throw new ConfigException("cannot read config file " + file + ": " + e, e);
    } catch (IllegalArgumentException e) {
      // Properties.load's only complaint: a malformed \\uXXXX escape.
      throw new ConfigException(file + ": " + e.getMessage(), e);
    }
    if (!p.duplicates.isEmpty()) {
      throw new ConfigException(file + ": " + joinProblems(p.duplicates));
    }
    return p;
  }

  /**
   * The environment variable that sets {@code key}: {@code FENCEKEEPER_} and the key in upper case
   * with {@code .} and {@code -} as {@code _}, e.g. {@code node.id} is {@code FENCEKEEPER_NODE_ID}
   * and {@code limits.value.max-bytes} is {@code FENCEKEEPER_LIMITS_VALUE_MAX_BYTES}.
   */
  public static String environmentVariable(String key) {
    return ENVIRONMENT_PREFIX
        + key.toUpperCase(java.util.Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  /** Every key's environment variable, in {@link #store} order. */
  public static List<String> environmentVariables() {
    return Keys.ALL.stream().map(ClusterConfig::environmentVariable).toList();
  }

  /**
   * A server's config: the properties file (if {@code file} is not null), each key overridden by
   * its environment variable ({@link #environmentVariable}) when that is set, as container
   * platforms expect. Other {@code FENCEKEEPER_} variables (the command line's own, such as {@code
   * FENCEKEEPER_DATA_DIR}) are not keys and are left alone.
   *
   * @throws ConfigException naming the file and the variables used, and the key and value at fault
   */
  public static ClusterConfig load(Path file, Map<String, String> env) {
    Properties fromEnv = new Properties();
    List<String> used = new ArrayList<>();
    for (String key : Keys.ALL) {
      String variable = environmentVariable(key);
      String value = env.get(variable);
      if (value != null) {
        fromEnv.setProperty(key, value);
        used.add(variable);
      }
    }
    if (file == null && used.isEmpty()) {
      throw new ConfigException(
          "no config: give a properties file, or set "
              + environmentVariable(Keys.PEERS)
              + " and "
              + environmentVariable(Keys.NODE_ID)
              + " (every key has a FENCEKEEPER_ variable)");
    }
    if (used.isEmpty()) {
      return load(file);
    }
    Properties p = new Properties();
    if (file != null) {
      p.putAll(readFile(file));
    }
    p.putAll(fromEnv);
    try {
      return fromProperties(p);
    } catch (ConfigException e) {
      throw new ConfigException(
          (file == null ? "" : file + " with ")
              + "environment "
              + String.join(", ", used)
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Builds a config from properties (see the class comment for keys and defaults). Every problem
   * found is reported in one exception, one line per key. Unknown keys are errors, so a typo such
   * as {@code lease.ttl.mni} cannot silently leave the default in force.
   */
  public static ClusterConfig fromProperties(Properties p) {
    List<String> problems = new ArrayList<>();
    for (Object key : p.keySet()) {
      if (!(key instanceof String)) {
        problems.add("'" + key + "': keys must be strings, not " + key.getClass().getName());
      }
    }
    for (String key : p.stringPropertyNames().stream().sorted().collect(Collectors.toList())) {
      if (!Keys.ALL.contains(key)) {
        problems.add(unknownKey(key, p.getProperty(key)));
      }
    }
    KeyReader r = new KeyReader(p, problems);

    String clusterName =
        r.get(Keys.CLUSTER_NAME, DEFAULT_CLUSTER_NAME, ClusterConfig::checkClusterName);
    String nodeId = r.get(Keys.NODE_ID, null, Function.identity());
    List<PeerAddress> peers = r.get(Keys.PEERS, null, text -> parsePeers(Keys.PEERS, text, false));
    if (peers == null && p.getProperty(Keys.PEERS) == null) {
      problems.add(
          Keys.PEERS + ": missing; list every member as id@host:port, e.g. " + PEERS_EXAMPLE);
    }
    Path storageDir = r.get(Keys.STORAGE_DIR, null, text -> parsePath(Keys.STORAGE_DIR, text));

    Limits d = Limits.defaults();
    Duration minTtl = r.get(Keys.LEASE_TTL_MIN, d.minTtl(), positiveDuration(Keys.LEASE_TTL_MIN));
    Duration maxTtl = r.get(Keys.LEASE_TTL_MAX, d.maxTtl(), positiveDuration(Keys.LEASE_TTL_MAX));
    Duration grace =
        r.get(
            Keys.LEASE_TAKEOVER_GRACE,
            d.takeoverGrace(),
            positiveDuration(Keys.LEASE_TAKEOVER_GRACE));
    int resourceBytes =
        r.get(
            Keys.RESOURCE_NAME_MAX_BYTES, d.maxResourceBytes(), size(Keys.RESOURCE_NAME_MAX_BYTES));
    int keyBytes = r.get(Keys.KEY_MAX_BYTES, d.maxKeyBytes(), size(Keys.KEY_MAX_BYTES));
    int ownerBytes = r.get(Keys.OWNER_MAX_BYTES, d.maxOwnerBytes(), size(Keys.OWNER_MAX_BYTES));
    int valueBytes = r.get(Keys.VALUE_MAX_BYTES, d.maxValueBytes(), size(Keys.VALUE_MAX_BYTES));
    int keysPerWrite =
        r.get(Keys.KEYS_PER_WRITE_MAX, d.maxKeysPerWrite(), count(Keys.KEYS_PER_WRITE_MAX));
    int requestIdBytes =
        r.get(Keys.REQUEST_ID_MAX_BYTES, d.maxRequestIdBytes(), size(Keys.REQUEST_ID_MAX_BYTES));
    int requestIds =
        r.get(
            Keys.REQUEST_IDS_PER_LEASE_MAX,
            d.maxRequestIdsPerLease(),
            count(Keys.REQUEST_IDS_PER_LEASE_MAX));
    Duration idleTimeout =
        r.get(
            Keys.RESOURCES_IDLE_TIMEOUT,
            d.idleTimeout(),
            positiveDuration(Keys.RESOURCES_IDLE_TIMEOUT));
    Duration waiterLiveness =
        r.get(
            Keys.LEASE_WAITER_LIVENESS,
            d.waiterLiveness(),
            positiveDuration(Keys.LEASE_WAITER_LIVENESS));
    int waiters =
        r.get(
            Keys.WAITERS_PER_RESOURCE_MAX,
            d.maxWaitersPerResource(),
            count(Keys.WAITERS_PER_RESOURCE_MAX));
    int keysPerResource =
        r.get(
            Keys.KEYS_PER_RESOURCE_MAX, d.maxKeysPerResource(), count(Keys.KEYS_PER_RESOURCE_MAX));
    int resourcesMax = r.get(Keys.RESOURCES_MAX, d.maxResources(), count(Keys.RESOURCES_MAX));
    int watchesPerClient =
        r.get(
            Keys.WATCHES_PER_CLIENT_MAX,
            d.maxWatchesPerClient(),
            count(Keys.WATCHES_PER_CLIENT_MAX));
    int requestsPerBatch =
        r.get(
            Keys.REQUESTS_PER_BATCH_MAX,
            d.maxRequestsPerBatch(),
            count(Keys.REQUESTS_PER_BATCH_MAX));

    long snapshotEntries =
        r.get(
            Keys.SNAPSHOT_AUTO_TRIGGER_ENTRIES,
            DEFAULT_SNAPSHOT_AUTO_TRIGGER_ENTRIES,
            text -> parsePositiveLong(Keys.SNAPSHOT_AUTO_TRIGGER_ENTRIES, text));
    Duration electionMin =
        r.get(
            Keys.ELECTION_TIMEOUT_MIN,
            DEFAULT_ELECTION_TIMEOUT_MIN,
            positiveDuration(Keys.ELECTION_TIMEOUT_MIN));
    Duration electionMax =
        r.get(
            Keys.ELECTION_TIMEOUT_MAX,
            DEFAULT_ELECTION_TIMEOUT_MAX,
            positiveDuration(Keys.ELECTION_TIMEOUT_MAX));
    Duration requestTimeout =
        r.get(
            Keys.CLIENT_REQUEST_TIMEOUT,
            DEFAULT_REQUEST_TIMEOUT,
            positiveDuration(Keys.CLIENT_REQUEST_TIMEOUT));
    Duration clockOffset =
        r.get(
            Keys.CLOCK_OFFSET, Duration.ZERO, text -> checkedClockOffset(Keys.CLOCK_OFFSET, text));
    int metricsPort =
        r.get(Keys.METRICS_PORT, 0, text -> parseMetricsPort(Keys.METRICS_PORT, text));
    String bind = r.get(Keys.BIND, null, text -> PeerAddress.checkHost(Keys.BIND, text));
    String metricsBind =
        r.get(Keys.METRICS_BIND, null, text -> PeerAddress.checkHost(Keys.METRICS_BIND, text));
    Path tlsCert = r.get(Keys.TLS_CERT, null, text -> parsePath(Keys.TLS_CERT, text));
    Path tlsKey = r.get(Keys.TLS_KEY, null, text -> parsePath(Keys.TLS_KEY, text));
    Path tlsTrust = r.get(Keys.TLS_TRUST, null, text -> parsePath(Keys.TLS_TRUST, text));
    Security defaults = Security.none();
    Set<String> admins =
        r.get(
            Keys.AUTHZ_ADMINS,
            defaults.admins(),
            text -> Security.parseCns(Keys.AUTHZ_ADMINS, text));
    Set<String> nodeCns =
        r.get(
            Keys.AUTHZ_NODES, defaults.nodes(), text -> Security.parseCns(Keys.AUTHZ_NODES, text));
    int pendingWrites =
        r.get(
            Keys.OVERLOAD_PENDING_WRITES_MAX,
            defaults.maxPendingWrites(),
            count(Keys.OVERLOAD_PENDING_WRITES_MAX));
    int pendingReads =
        r.get(
            Keys.OVERLOAD_PENDING_READS_MAX,
            defaults.maxPendingReads(),
            count(Keys.OVERLOAD_PENDING_READS_MAX));
    Security.TlsFiles tls = null;
    if (tlsCert != null || tlsKey != null || tlsTrust != null) {
      try {
        tls = new Security.TlsFiles(tlsCert, tlsKey, tlsTrust);
      } catch (ConfigException e) {
        problems.add(e.getMessage());
      }
    }

    if (!problems.isEmpty()) {
      throw new ConfigException(joinProblems(problems));
    }
    // Cross-key rules (min <= max, node.id among peers, ...) only make sense once every key parsed.
    Limits limits =
        new Limits(
            minTtl,
            maxTtl,
            grace,
            resourceBytes,
            keyBytes,
            ownerBytes,
            valueBytes,
            keysPerWrite,
            requestIdBytes,
            requestIds,
            idleTimeout,
            waiterLiveness,
            waiters,
            keysPerResource,
            resourcesMax,
            watchesPerClient,
            requestsPerBatch);
    Security security = new Security(tls, admins, nodeCns, pendingWrites, pendingReads);
    return new ClusterConfig(
        clusterName,
        peers,
        nodeId,
        storageDir,
        limits,
        snapshotEntries,
        electionMin,
        electionMax,
        requestTimeout,
        clockOffset.toMillis(),
        metricsPort,
        bind,
        metricsBind,
        security);
  }

  /** Three members n1, n2, n3 on 127.0.0.1:7301..7303, no node id, storage under ./data. */
  public static ClusterConfig localDefaults() {
    return local(DEFAULT_BASE_PORT);
  }

  /**
   * Three members n1, n2, n3 on 127.0.0.1:basePort..basePort+2, otherwise as {@link
   * #localDefaults}.
   */
  public static ClusterConfig local(int basePort) {
    if (basePort < 1 || basePort > 65533) {
      throw new ConfigException(
          "base port: '" + basePort + "' must be in 1..65533 (three consecutive ports)");
    }
    List<PeerAddress> peers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      peers.add(new PeerAddress("n" + (i + 1), "127.0.0.1", basePort + i));
    }
    return withDefaults(peers);
  }

  /**
   * The CLI's {@code --peers}: either all {@code host:port} (ids n1, n2, ... assigned in order) or
   * all {@code id@host:port}. Mixing the two is refused: an assigned id could collide with a given
   * one.
   */
  public static ClusterConfig forPeers(String commaSeparated) {
    return withDefaults(parsePeers(Keys.PEERS, commaSeparated, true));
  }

  private static ClusterConfig withDefaults(List<PeerAddress> peers) {
    return new ClusterConfig(
        DEFAULT_CLUSTER_NAME,
        peers,
        null,
        null,
        Limits.defaults(),
        DEFAULT_SNAPSHOT_AUTO_TRIGGER_ENTRIES,
        DEFAULT_ELECTION_TIMEOUT_MIN,
        DEFAULT_ELECTION_TIMEOUT_MAX,
        DEFAULT_REQUEST_TIMEOUT,
        0,
        0,
        null,
        null,
        Security.none());
  }

  // ---------------------------------------------------------------------------------------------
  // Accessors

  public String clusterName() {
    return clusterName;
  }

  /** Derived from the cluster name, so every node and client computes the same id independently. */
  public RaftGroupId groupId() {
    return groupId;
  }

  public List<PeerAddress> peers() {
    return peers;
  }

  public Optional<String> nodeId() {
    return Optional.ofNullable(nodeId);
  }

  /** The member this process is. */
  public PeerAddress self() {
    if (nodeId == null) {
      throw new ConfigException(
          Keys.NODE_ID
              + ": missing; set it to the peer this process runs as, one of "
              + peerIds(peers));
    }
    return peers.stream().filter(peer -> peer.id().equals(nodeId)).findFirst().orElseThrow();
  }

  /** {@code storage.dir} if set, else {@code ./data/<node.id>}, else {@code ./data}. */
  public Path storageDir() {
    if (explicitStorageDir != null) {
      return explicitStorageDir;
    }
    return nodeId == null ? DEFAULT_STORAGE_ROOT : DEFAULT_STORAGE_ROOT.resolve(nodeId);
  }

  public Limits limits() {
    return limits;
  }

  public long snapshotAutoTriggerEntries() {
    return snapshotAutoTriggerEntries;
  }

  public Duration electionTimeoutMin() {
    return electionTimeoutMin;
  }

  public Duration electionTimeoutMax() {
    return electionTimeoutMax;
  }

  public Duration requestTimeout() {
    return requestTimeout;
  }

  public long clockOffsetMs() {
    return clockOffsetMs;
  }

  public int metricsPort() {
    return metricsPort;
  }

  /**
   * The address this node's Raft port (server, client and admin services) listens on: {@code bind}
   * if set ({@code 0.0.0.0} or {@code ::} for every interface), else this node's own host in {@code
   * peers}, so a node listens only where its peers and clients are told to reach it.
   *
   * @throws ConfigException if no node id is set
   */
  public String bindHost() {
    return bindHost != null ? bindHost : self().host();
  }

  /**
   * The address {@code /metrics} and {@code /health} listen on: {@code metrics.bind}, else {@link
   * #bindHost()}.
   */
  public String metricsBindHost() {
    return metricsBindHost != null ? metricsBindHost : bindHost();
  }

  /** This config with {@code bind} set ({@code null}: the node's own host again). */
  public ClusterConfig withBindHost(String host) {
    return new ClusterConfig(
        clusterName,
        peers,
        nodeId,
        explicitStorageDir,
        limits,
        snapshotAutoTriggerEntries,
        electionTimeoutMin,
        electionTimeoutMax,
        requestTimeout,
        clockOffsetMs,
        metricsPort,
        host,
        metricsBindHost,
        security);
  }

  /**
   * This config with {@code metrics.bind} set ({@code null}: the same as the Raft port's again).
   */
  public ClusterConfig withMetricsBindHost(String host) {
    return new ClusterConfig(
        clusterName,
        peers,
        nodeId,
        explicitStorageDir,
        limits,
        snapshotAutoTriggerEntries,
        electionTimeoutMin,
        electionTimeoutMax,
        requestTimeout,
        clockOffsetMs,
        metricsPort,
        bindHost,
        host,
        security);
  }

  /** TLS files, admin and node identities, overload bounds. */
  public Security security() {
    return security;
  }

  /** Ratis parameters for servers and clients of this cluster: the mutual-TLS setup, if any. */
  public Parameters ratisParameters() {
    return security.ratisParameters();
  }

  public List<RaftPeer> raftPeers() {
    return peers.stream()
        .map(peer -> RaftPeer.newBuilder().setId(peer.id()).setAddress(peer.address()).build())
        .collect(Collectors.toUnmodifiableList());
  }

  public RaftGroup raftGroup() {
    return RaftGroup.valueOf(groupId, raftPeers());
  }

  /**
   * Ratis server properties for {@link #self()}.
   *
   * @throws ConfigException if no node id is set
   */
  public RaftProperties serverProperties() {
    PeerAddress self = self();
    RaftProperties p = new RaftProperties();
    // Ratis' default is /tmp/raft-server, shared by every server that forgets to set it.
    RaftServerConfigKeys.setStorageDir(p, List.of(storageDir().toFile()));
    GrpcConfigKeys.Server.setPort(p, self.port());
    // Ratis listens on every interface unless given a host; the client and admin services share
    // this
    // port (their own ports are unset), and their hosts are set too in case they ever get one.
    String host = bindHost();
    GrpcConfigKeys.Server.setHost(p, host);
    GrpcConfigKeys.Client.setHost(p, host);
    GrpcConfigKeys.Admin.setHost(p, host);
    // Ratis' DEFAULT answers reads from the leader's state without a quorum check: a deposed
    // leader could report a lease that has already been re-granted.
    RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, snapshotAutoTriggerEntries);
    // Ratis keeps every snapshot by default and the disk fills.
    RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, SNAPSHOT_RETENTION_FILES);
    // A snapshot at shutdown makes restarts replay less log; only effective with auto-trigger on.
    RaftServerConfigKeys.Snapshot.setTriggerWhenStopEnabled(p, true);
    RaftServerConfigKeys.Rpc.setTimeoutMin(p, millis(electionTimeoutMin));
    RaftServerConfigKeys.Rpc.setTimeoutMax(p, millis(electionTimeoutMax));
    // By default every advance of the commit index appends a METADATA entry: about two log entries
    // and
    // fsyncs per command at low concurrency (docs/design.md, Ratis facts: about 2.2x writes
    // without). The
    // cost of turning it off: a restarted node learns the commit index from the leader instead of
    // its own
    // log, so it applies its entries only once a leader is elected, which Raft requires anyway.
    RaftServerConfigKeys.Log.setLogMetadataEnabled(p, false);
    // Ratis keeps the entries of up to six closed 32 MB log segments in heap (up to 200 MB) so a
    // lagging
    // follower can be fed without a disk read. Our state already holds every value those entries
    // wrote:
    // at 1,000,000 keys the cache was a quarter of the heap (docs/benchmarks.md). Two segments, at
    // most
    // LOG_CACHE_MAX_BYTES, still cover any follower a few seconds behind; one further back reads
    // the disk.
    RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, LOG_CACHE_SEGMENTS);
    RaftServerConfigKeys.Log.setSegmentCacheSizeMax(p, SizeInBytes.valueOf(LOG_CACHE_MAX_BYTES));
    // The state machine refuses commands beyond overload.pending-writes.max with OVERLOADED, one by
    // one.
    // Ratis's own bound stays above it as a backstop only: its ResourceUnavailableException fails
    // every
    // request of a client's ordered stream at once, accepted ones included (docs/security.md).
    RaftServerConfigKeys.Write.setElementLimit(
        p,
        Math.max(
            RaftServerConfigKeys.Write.ELEMENT_LIMIT_DEFAULT, security.maxPendingWrites() * 2));
    return p;
  }

  /** Ratis client properties: per-attempt request timeout and the async outstanding-request cap. */
  public RaftProperties clientProperties() {
    RaftProperties p = new RaftProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, millis(requestTimeout));
    RaftClientConfigKeys.Async.setOutstandingRequestsMax(p, CLIENT_ASYNC_OUTSTANDING_MAX);
    return p;
  }

  // ---------------------------------------------------------------------------------------------
  // Copies

  /** This config as seen by member {@code id}; the derived storage dir moves with it. */
  public ClusterConfig withNodeId(String id) {
    if (id == null) {
      throw new ConfigException(Keys.NODE_ID + ": missing; expected one of " + peerIds(peers));
    }
    return new ClusterConfig(
        clusterName,
        peers,
        id,
        explicitStorageDir,
        limits,
        snapshotAutoTriggerEntries,
        electionTimeoutMin,
        electionTimeoutMax,
        requestTimeout,
        clockOffsetMs,
        metricsPort,
        bindHost,
        metricsBindHost,
        security);
  }

  public ClusterConfig withStorageDir(Path dir) {
    if (dir == null) {
      throw new ConfigException(Keys.STORAGE_DIR + ": missing");
    }
    return new ClusterConfig(
        clusterName,
        peers,
        nodeId,
        dir,
        limits,
        snapshotAutoTriggerEntries,
        electionTimeoutMin,
        electionTimeoutMax,
        requestTimeout,
        clockOffsetMs,
        metricsPort,
        bindHost,
        metricsBindHost,
        security);
  }

  public ClusterConfig withClockOffsetMs(long offsetMs) {
    return new ClusterConfig(
        clusterName,
        peers,
        nodeId,
        explicitStorageDir,
        limits,
        snapshotAutoTriggerEntries,
        electionTimeoutMin,
        electionTimeoutMax,
        requestTimeout,
        offsetMs,
        metricsPort,
        bindHost,
        metricsBindHost,
        security);
  }

  public ClusterConfig withMetricsPort(int port) {
    return new ClusterConfig(
        clusterName,
        peers,
        nodeId,
        explicitStorageDir,
        limits,
        snapshotAutoTriggerEntries,
        electionTimeoutMin,
        electionTimeoutMax,
        requestTimeout,
        clockOffsetMs,
        port,
        bindHost,
        metricsBindHost,
        security);
  }

  /**
   * This config with other TLS files, admins or overload bounds (e.g. a client's own certificate).
   */
  public ClusterConfig withSecurity(Security newSecurity) {
    return new ClusterConfig(
        clusterName,
        peers,
        nodeId,
        explicitStorageDir,
        limits,
        snapshotAutoTriggerEntries,
        electionTimeoutMin,
        electionTimeoutMax,
        requestTimeout,
        clockOffsetMs,
        metricsPort,
        bindHost,
        metricsBindHost,
        Objects.requireNonNull(newSecurity, "security"));
  }

  // ---------------------------------------------------------------------------------------------
  // Writing

  /**
   * Every setting as properties that {@link #fromProperties} turns back into an equal config.
   * {@code node.id} and {@code storage.dir} appear only when set, so a derived storage dir stays
   * derived.
   */
  public Properties toProperties() {
    Properties p = new Properties();
    p.setProperty(Keys.CLUSTER_NAME, clusterName);
    if (nodeId != null) {
      p.setProperty(Keys.NODE_ID, nodeId);
    }
    p.setProperty(
        Keys.PEERS, peers.stream().map(PeerAddress::toString).collect(Collectors.joining(",")));
    if (explicitStorageDir != null) {
      p.setProperty(Keys.STORAGE_DIR, explicitStorageDir.toString());
    }
    p.setProperty(Keys.LEASE_TTL_MIN, Durations.format(limits.minTtl()));
    p.setProperty(Keys.LEASE_TTL_MAX, Durations.format(limits.maxTtl()));
    p.setProperty(Keys.LEASE_TAKEOVER_GRACE, Durations.format(limits.takeoverGrace()));
    p.setProperty(Keys.RESOURCE_NAME_MAX_BYTES, Integer.toString(limits.maxResourceBytes()));
    p.setProperty(Keys.KEY_MAX_BYTES, Integer.toString(limits.maxKeyBytes()));
    p.setProperty(Keys.OWNER_MAX_BYTES, Integer.toString(limits.maxOwnerBytes()));
    p.setProperty(Keys.VALUE_MAX_BYTES, Integer.toString(limits.maxValueBytes()));
    p.setProperty(Keys.KEYS_PER_WRITE_MAX, Integer.toString(limits.maxKeysPerWrite()));
    p.setProperty(Keys.REQUEST_ID_MAX_BYTES, Integer.toString(limits.maxRequestIdBytes()));
    p.setProperty(Keys.REQUEST_IDS_PER_LEASE_MAX, Integer.toString(limits.maxRequestIdsPerLease()));
    p.setProperty(Keys.RESOURCES_IDLE_TIMEOUT, Durations.format(limits.idleTimeout()));
    p.setProperty(Keys.LEASE_WAITER_LIVENESS, Durations.format(limits.waiterLiveness()));
    p.setProperty(Keys.WAITERS_PER_RESOURCE_MAX, Integer.toString(limits.maxWaitersPerResource()));
    p.setProperty(Keys.KEYS_PER_RESOURCE_MAX, Integer.toString(limits.maxKeysPerResource()));
    p.setProperty(Keys.RESOURCES_MAX, Integer.toString(limits.maxResources()));
    p.setProperty(Keys.WATCHES_PER_CLIENT_MAX, Integer.toString(limits.maxWatchesPerClient()));
    p.setProperty(Keys.REQUESTS_PER_BATCH_MAX, Integer.toString(limits.maxRequestsPerBatch()));
    p.setProperty(Keys.SNAPSHOT_AUTO_TRIGGER_ENTRIES, Long.toString(snapshotAutoTriggerEntries));
    p.setProperty(Keys.ELECTION_TIMEOUT_MIN, Durations.format(electionTimeoutMin));
    p.setProperty(Keys.ELECTION_TIMEOUT_MAX, Durations.format(electionTimeoutMax));
    p.setProperty(Keys.CLIENT_REQUEST_TIMEOUT, Durations.format(requestTimeout));
    p.setProperty(Keys.CLOCK_OFFSET, Durations.format(Duration.ofMillis(clockOffsetMs)));
    p.setProperty(Keys.METRICS_PORT, Integer.toString(metricsPort));
    if (bindHost != null) {
      p.setProperty(Keys.BIND, bindHost);
    }
    if (metricsBindHost != null) {
      p.setProperty(Keys.METRICS_BIND, metricsBindHost);
    }
    if (security.tls() != null) {
      p.setProperty(Keys.TLS_CERT, security.tls().cert().toString());
      p.setProperty(Keys.TLS_KEY, security.tls().key().toString());
      p.setProperty(Keys.TLS_TRUST, security.tls().trust().toString());
    }
    if (!security.admins().isEmpty()) {
      p.setProperty(Keys.AUTHZ_ADMINS, security.join(security.admins()));
    }
    p.setProperty(Keys.AUTHZ_NODES, security.join(security.nodes()));
    p.setProperty(Keys.OVERLOAD_PENDING_WRITES_MAX, Integer.toString(security.maxPendingWrites()));
    p.setProperty(Keys.OVERLOAD_PENDING_READS_MAX, Integer.toString(security.maxPendingReads()));
    return p;
  }

  /**
   * Writes {@link #toProperties()} as UTF-8, keys in a fixed order and without the timestamp {@link
   * Properties#store} adds, so regenerating an unchanged config leaves the file unchanged. The file
   * is replaced atomically where the file system allows, so a crash never leaves half a config
   * behind.
   *
   * @throws ConfigException naming the file if it cannot be written
   */
  public void store(Path file) {
    StringBuilder text =
        new StringBuilder()
            .append("# fencekeeper cluster configuration\n")
            .append("# Durations: 250ms, 5s, 2m, 1h. Sizes: bytes, or with a KiB/MiB suffix.\n")
            .append(
                "# node.id and storage.dir may be set per node; peers and cluster.name must match"
                    + " on all.\n");
    Properties p = toProperties();
    for (String key : Keys.ALL) {
      String value = p.getProperty(key);
      if (value != null) {
        text.append(escapedLine(key, value)).append('\n');
      }
    }
    Path target = file.toAbsolutePath();
    // A sibling, not Files.createTempFile: that one is created owner-only and the move would
    // carry those permissions over to the config file.
    Path tmp = target.resolveSibling("." + target.getFileName() + ".tmp");
    try {
      Files.createDirectories(target.getParent());
      Files.writeString(tmp, text, UTF_8);
      try {
        Files.move(
            tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      try {
        Files.deleteIfExists(tmp);
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw new ConfigException("cannot write config file " + file + ": " + e, e);
    }
  }

  /**
   * One {@code key=value} line that {@link Properties#load} reads back exactly. Hand-rolled because
   * {@link Properties#store} also escapes ':' and '=' in values, turning every peer list into
   * {@code n1@127.0.0.1\:7301}; keys are our own constants and need no escaping.
   */
  private static String escapedLine(String key, String value) {
    StringBuilder line = new StringBuilder(key).append('=');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '\\' -> line.append("\\\\");
        case '\t' -> line.append("\\t");
        case '\n' -> line.append("\\n");
        case '\r' -> line.append("\\r");
        case '\f' -> line.append("\\f");
        // load() strips leading blanks from a value; escaping the first keeps it.
        case ' ' -> line.append(i == 0 ? "\\ " : " ");
        default -> {
          if (c < 0x20 || c == 0x7f) {
            line.append(String.format("\\u%04x", (int) c));
          } else {
            line.append(c);
          }
        }
      }
    }
    return line.toString();
  }

  // ---------------------------------------------------------------------------------------------
  // Object

  @Override
  public boolean equals(Object o) {
    return this == o
        || (o instanceof ClusterConfig c
            && clusterName.equals(c.clusterName)
            && peers.equals(c.peers)
            && Objects.equals(nodeId, c.nodeId)
            && Objects.equals(explicitStorageDir, c.explicitStorageDir)
            && limits.equals(c.limits)
            && snapshotAutoTriggerEntries == c.snapshotAutoTriggerEntries
            && electionTimeoutMin.equals(c.electionTimeoutMin)
            && electionTimeoutMax.equals(c.electionTimeoutMax)
            && requestTimeout.equals(c.requestTimeout)
            && clockOffsetMs == c.clockOffsetMs
            && metricsPort == c.metricsPort
            && Objects.equals(bindHost, c.bindHost)
            && Objects.equals(metricsBindHost, c.metricsBindHost)
            && security.equals(c.security));
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        clusterName,
        peers,
        nodeId,
        explicitStorageDir,
        limits,
        snapshotAutoTriggerEntries,
        electionTimeoutMin,
        electionTimeoutMax,
        requestTimeout,
        clockOffsetMs,
        metricsPort,
        bindHost,
        metricsBindHost,
        security);
  }

  @Override
  public String toString() {
    return "ClusterConfig{"
        + Keys.CLUSTER_NAME
        + "="
        + clusterName
        + ", "
        + Keys.NODE_ID
        + "="
        + (nodeId == null ? "(none)" : nodeId)
        + ", "
        + Keys.PEERS
        + "="
        + peers
        + ", "
        + Keys.STORAGE_DIR
        + "="
        + storageDir()
        + ", "
        + limits
        + ", "
        + Keys.SNAPSHOT_AUTO_TRIGGER_ENTRIES
        + "="
        + snapshotAutoTriggerEntries
        + ", raft.election.timeout="
        + Durations.format(electionTimeoutMin)
        + ".."
        + Durations.format(electionTimeoutMax)
        + ", "
        + Keys.CLIENT_REQUEST_TIMEOUT
        + "="
        + Durations.format(requestTimeout)
        + ", "
        + Keys.CLOCK_OFFSET
        + "="
        + Durations.format(Duration.ofMillis(clockOffsetMs))
        + ", "
        + Keys.METRICS_PORT
        + "="
        + metricsPort
        + ", "
        + Keys.BIND
        + "="
        + (bindHost == null ? "(own peer host)" : bindHost)
        + ", "
        + Keys.METRICS_BIND
        + "="
        + (metricsBindHost == null ? "(as " + Keys.BIND + ")" : metricsBindHost)
        + ", "
        + Keys.TLS_CERT
        + "="
        + (security.tls() == null ? "(plaintext)" : security.tls().cert())
        + ", "
        + Keys.AUTHZ_ADMINS
        + "="
        + security.admins()
        + ", "
        + Keys.OVERLOAD_PENDING_WRITES_MAX
        + "="
        + security.maxPendingWrites()
        + ", "
        + Keys.OVERLOAD_PENDING_READS_MAX
        + "="
        + security.maxPendingReads()
        + "}";
  }

  // ---------------------------------------------------------------------------------------------
  // Validation and parsing

  private static String checkClusterName(String name) {
    if (name == null) {
      throw new ConfigException(Keys.CLUSTER_NAME + ": missing");
    }
    if (!CLUSTER_NAME.matcher(name).matches()) {
      throw new ConfigException(
          Keys.CLUSTER_NAME + ": '" + name + "' must match [A-Za-z0-9._-]{1,64}");
    }
    return name;
  }

  private static List<PeerAddress> checkPeers(List<PeerAddress> peers) {
    if (peers == null || peers.isEmpty()) {
      throw new ConfigException(
          Keys.PEERS + ": missing; list every member as id@host:port, e.g. " + PEERS_EXAMPLE);
    }
    List<PeerAddress> copy = List.copyOf(peers);
    String listed = copy.stream().map(PeerAddress::toString).collect(Collectors.joining(","));
    Set<String> ids = new HashSet<>();
    Map<String, PeerAddress> byEndpoint = new HashMap<>();
    for (PeerAddress peer : copy) {
      if (!ids.add(peer.id())) {
        throw new ConfigException(
            Keys.PEERS + ": duplicate peer id '" + peer.id() + "' in '" + listed + "'");
      }
      PeerAddress other = byEndpoint.putIfAbsent(peer.endpointKey(), peer);
      if (other != null) {
        throw new ConfigException(
            Keys.PEERS
                + ": '"
                + other.id()
                + "' and '"
                + peer.id()
                + "' both use address "
                + peer.address()
                + " in '"
                + listed
                + "'");
      }
    }
    return copy;
  }

  private static String checkNodeId(String nodeId, List<PeerAddress> peers) {
    if (nodeId != null && peers.stream().noneMatch(peer -> peer.id().equals(nodeId))) {
      throw new ConfigException(
          Keys.NODE_ID + ": '" + nodeId + "' is not one of the peers " + peerIds(peers));
    }
    return nodeId;
  }

  private static Duration positive(String key, Duration d) {
    if (d == null) {
      throw new ConfigException(key + ": missing");
    }
    if (d.isNegative() || d.isZero()) {
      throw new ConfigException(key + ": '" + Durations.describe(d) + "' must be positive");
    }
    if (d.getNano() % 1_000_000 != 0) {
      throw new ConfigException(key + ": '" + d + "' must be a whole number of milliseconds");
    }
    return d;
  }

  private static long checkClockOffset(long offsetMs) {
    if (offsetMs < -MAX_CLOCK_OFFSET_MS || offsetMs > MAX_CLOCK_OFFSET_MS) {
      throw new ConfigException(
          Keys.CLOCK_OFFSET
              + ": '"
              + Durations.describe(Duration.ofMillis(offsetMs))
              + "' is outside -24h..24h");
    }
    return offsetMs;
  }

  private static int checkMetricsPort(int port, String nodeId, List<PeerAddress> peers) {
    if (port < 0 || port > 65535) {
      throw new ConfigException(
          Keys.METRICS_PORT + ": '" + port + "' must be in 0..65535 (0 disables)");
    }
    if (port != 0 && nodeId != null) {
      // Two listeners on one host:port: whichever starts second fails, at startup rather than here.
      PeerAddress self =
          peers.stream().filter(peer -> peer.id().equals(nodeId)).findFirst().orElseThrow();
      for (PeerAddress peer : peers) {
        if (peer.port() == port && peer.host().equalsIgnoreCase(self.host())) {
          throw new ConfigException(
              Keys.METRICS_PORT
                  + ": '"
                  + port
                  + "' is already the Raft port of peer "
                  + peer.id()
                  + " ("
                  + peer.address()
                  + ")");
        }
      }
    }
    return port;
  }

  static List<PeerAddress> parsePeers(String key, String text, boolean allowBareHostPort) {
    if (text == null || text.isBlank()) {
      throw new ConfigException(
          key
              + ": '"
              + (text == null ? "" : text)
              + "' lists no peers; expected id@host:port,... e.g. "
              + PEERS_EXAMPLE);
    }
    String[] entries = text.split(",", -1);
    List<PeerAddress> peers = new ArrayList<>(entries.length);
    Boolean withIds = null;
    for (int i = 0; i < entries.length; i++) {
      String entry = entries[i].trim();
      if (entry.isEmpty()) {
        throw new ConfigException(
            key + ": '" + text + "' has an empty entry at position " + (i + 1));
      }
      boolean hasId = entry.indexOf('@') >= 0;
      if (hasId || !allowBareHostPort) {
        peers.add(PeerAddress.parse(key, entry));
      } else {
        PeerAddress.HostPort hp =
            PeerAddress.hostPort(
                key, entry, entry, "; expected host:port or id@host:port (e.g. 127.0.0.1:7301)");
        peers.add(new PeerAddress("n" + (i + 1), hp.host(), hp.port()));
      }
      if (withIds != null && withIds != hasId) {
        throw new ConfigException(
            key
                + ": '"
                + text
                + "' mixes host:port and id@host:port entries; use one form for all");
      }
      withIds = hasId;
    }
    return peers;
  }

  private static Path parsePath(String key, String text) {
    try {
      return Path.of(text);
    } catch (InvalidPathException e) {
      throw new ConfigException(
          key + ": '" + text + "' is not a valid path (" + e.getReason() + ")");
    }
  }

  private static Function<String, Duration> positiveDuration(String key) {
    return text -> {
      Duration d = Durations.parse(key, text);
      if (d.isNegative() || d.isZero()) {
        throw new ConfigException(key + ": '" + text + "' must be positive");
      }
      return d;
    };
  }

  private static Duration checkedClockOffset(String key, String text) {
    Duration d = Durations.parse(key, text);
    if (d.abs().toMillis() > MAX_CLOCK_OFFSET_MS) {
      throw new ConfigException(key + ": '" + text + "' is outside -24h..24h");
    }
    return d;
  }

  /** Bytes, optionally with a KiB or MiB suffix; 1..Integer.MAX_VALUE. */
  private static Function<String, Integer> size(String key) {
    return text -> {
      Matcher m = SIZE.matcher(text);
      if (!m.matches()) {
        throw new ConfigException(
            key + ": '" + text + "' is not a size (use e.g. 512, 64KiB, 1MiB)");
      }
      long unit = m.group(2) == null ? 1 : "KiB".equals(m.group(2)) ? 1L << 10 : 1L << 20;
      long bytes;
      try {
        bytes = Math.multiplyExact(Long.parseLong(m.group(1)), unit);
      } catch (NumberFormatException | ArithmeticException e) {
        bytes = Long.MAX_VALUE;
      }
      return checkedInt(key, text, bytes);
    };
  }

  private static Function<String, Integer> count(String key) {
    return text -> {
      if (!WHOLE_NUMBER.matcher(text).matches()) {
        throw new ConfigException(key + ": '" + text + "' is not a whole number");
      }
      long n;
      try {
        n = Long.parseLong(text);
      } catch (NumberFormatException e) {
        n = Long.MAX_VALUE;
      }
      return checkedInt(key, text, n);
    };
  }

  private static int checkedInt(String key, String text, long n) {
    if (n <= 0) {
      throw new ConfigException(key + ": '" + text + "' must be positive");
    }
    if (n > Integer.MAX_VALUE) {
      throw new ConfigException(
          key + ": '" + text + "' is too large (at most " + Integer.MAX_VALUE + ")");
    }
    return (int) n;
  }

  private static long parsePositiveLong(String key, String text) {
    if (!WHOLE_NUMBER.matcher(text).matches()) {
      throw new ConfigException(key + ": '" + text + "' is not a whole number");
    }
    try {
      long n = Long.parseLong(text);
      if (n <= 0) {
        throw new ConfigException(key + ": '" + text + "' must be positive");
      }
      return n;
    } catch (NumberFormatException e) {
      throw new ConfigException(key + ": '" + text + "' is too large");
    }
  }

  private static int parseMetricsPort(String key, String text) {
    if (!WHOLE_NUMBER.matcher(text).matches()) {
      throw new ConfigException(
          key + ": '" + text + "' is not a port number (0..65535, 0 disables)");
    }
    try {
      int port = Integer.parseInt(text);
      if (port < 0 || port > 65535) {
        throw new NumberFormatException();
      }
      return port;
    } catch (NumberFormatException e) {
      throw new ConfigException(key + ": '" + text + "' must be in 0..65535 (0 disables)");
    }
  }

  private static String unknownKey(String key, String value) {
    String closest = null;
    int best = Integer.MAX_VALUE;
    for (String known : Keys.ALL) {
      int distance = editDistance(key, known);
      if (distance < best) {
        best = distance;
        closest = known;
      }
    }
    String message = key + ": unknown key (value '" + value + "')";
    // Up to three edits catches transpositions and dropped or doubled letters without suggesting
    // unrelated keys.
    return best <= 3
        ? message + "; did you mean '" + closest + "'?"
        : message + "; known keys: " + String.join(", ", Keys.ALL);
  }

  private static int editDistance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitution = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(substitution, Math.min(prev[j], cur[j - 1]) + 1);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }

  private static String peerIds(List<PeerAddress> peers) {
    return peers.stream().map(PeerAddress::id).collect(Collectors.joining(", ", "(", ")"));
  }

  private static TimeDuration millis(Duration d) {
    return TimeDuration.valueOf(d.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static String joinProblems(List<String> problems) {
    if (problems.size() == 1) {
      return problems.get(0);
    }
    return problems.size() + " problems:\n  " + String.join("\n  ", problems);
  }

  /**
   * Reads one key, records a problem instead of throwing so that {@code fromProperties} reports
   * every bad key at once, and treats an empty value as a mistake rather than "use the default".
   */
  private static final class KeyReader {
    private final Properties p;
    private final List<String> problems;

    KeyReader(Properties p, List<String> problems) {
      this.p = p;
      this.problems = problems;
    }

    <T> T get(String key, T defaultValue, Function<String, T> parse) {
      String raw = p.getProperty(key);
      if (raw == null) {
        return defaultValue;
      }
      // Properties.load keeps trailing blanks, which are invisible in an editor.
      String text = raw.trim();
      if (text.isEmpty()) {
        problems.add(key + ": '" + raw + "' is empty; remove the line to use the default");
        return defaultValue;
      }
      try {
        return parse.apply(text);
      } catch (ConfigException e) {
        problems.add(e.getMessage());
        return defaultValue;
      }
    }
  }

  /** Records keys that {@link Properties#load} sees more than once. */
  private static final class DuplicateRejectingProperties extends Properties {
    private static final long serialVersionUID = 1L;
    private final transient List<String> duplicates = new ArrayList<>();

    @Override
    public synchronized Object put(Object key, Object value) {
      Object previous = super.put(key, value);
      if (previous != null) {
        duplicates.add(key + ": set twice ('" + previous + "', then '" + value + "'); keep one");
      }
      return previous;
    }
  }
}
