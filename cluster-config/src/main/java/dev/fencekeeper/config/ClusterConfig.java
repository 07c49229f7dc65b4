package dev.fencekeeper.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * The whole description of one fencekeeper cluster, and optionally which member this process is.
 * Immutable and always valid: every way of obtaining one (file, {@link Properties}, environment,
 * factories, {@code with*} copies) runs the same checks and fails with a {@link ConfigException}
 * that names the offending key and value.
 *
 * <p>It holds one value per key of the properties file; each key (name, syntax, default, bounds,
 * meaning) is defined once in {@code Keys}, and docs/configuration.md lists them all. A node's
 * config requires {@code peers} (its Raft members); a client's requires {@code endpoints} (the
 * nodes' client ports) or {@code peers}, from which the client ports follow by the default rule.
 * Durations are written as in {@link Durations}: {@code 250ms}, {@code 5s}, {@code 2m}, {@code 1h}.
 */
public final class ClusterConfig {

  public static final int DEFAULT_BASE_PORT = 7301;

  /**
   * A node's client port is its Raft port plus this unless {@code client.port} says otherwise: the
   * one rule by which nodes, the command line and clients find each other's client ports.
   */
  public static final int CLIENT_PORT_OFFSET = 200;

  /**
   * A node's JSON gateway listens on its Raft port plus this unless {@code http.port} says
   * otherwise; a follower redirects HTTP clients to the leader's gateway by the same rule.
   */
  public static final int HTTP_PORT_OFFSET = 300;

  /** The prefix of the environment variables that {@link #load(Path, Map)} reads. */
  public static final String ENVIRONMENT_PREFIX = "FENCEKEEPER_";

  static final Path DEFAULT_STORAGE_ROOT = Path.of("./data");

  // Every key with a value: defaults filled in, keys without a default only when set.
  private final Map<ConfigKey<?>, Object> values;
  private final Limits limits;
  private final Security security;
  private final Overload overload;
  private final StreamLimits streamLimits;

  private ClusterConfig(Map<ConfigKey<?>, Object> given) {
    Map<ConfigKey<?>, Object> checked = new HashMap<>();
    for (ConfigKey<?> key : Keys.ALL) {
      Object value = given.get(key);
      if (value != null) {
        checked.put(key, key.checkObject(value));
      }
    }
    this.values = Collections.unmodifiableMap(checked);
    List<PeerAddress> peers = peers();
    String nodeId = value(Keys.NODE_ID);
    if (value(Keys.PEERS) == null && (value(Keys.ENDPOINTS) == null || nodeId != null)) {
      throw new ConfigException(ConfigReader.missingPeers());
    }
    if (nodeId != null && value(Keys.ENDPOINTS) != null) {
      throw new ConfigException(
          Keys.ENDPOINTS
              + ": is for clients; a node ("
              + Keys.NODE_ID
              + " "
              + nodeId
              + ") knows its cluster by "
              + Keys.PEERS
              + " and serves clients on its client.port");
    }
    if (nodeId != null && peers.stream().noneMatch(peer -> peer.id().equals(nodeId))) {
      throw new ConfigException(
          Keys.NODE_ID + ": '" + nodeId + "' is not one of the peers " + PeerAddress.ids(peers));
    }
    // Ratis randomises each election timeout within [min, max); an empty range means colliding
    // candidates keep splitting the vote.
    if (electionTimeoutMax().compareTo(electionTimeoutMin()) <= 0) {
      throw new ConfigException(
          Keys.ELECTION_TIMEOUT_MAX
              + ": '"
              + Durations.describe(electionTimeoutMax())
              + "' must be greater than "
              + Keys.ELECTION_TIMEOUT_MIN
              + " '"
              + Durations.describe(electionTimeoutMin())
              + "'");
    }
    if (nodeId != null) {
      PortRules.check(self(), peers, metricsPort(), clientPort(), httpPort());
    }
    this.limits = Limits.of(values);
    this.security = Security.of(values);
    this.overload =
        new Overload(
            value(Keys.OVERLOAD_PENDING_WRITES_MAX), value(Keys.OVERLOAD_PENDING_READS_MAX));
    this.streamLimits =
        new StreamLimits(value(Keys.SESSIONS_PER_CLIENT_MAX), value(Keys.STREAM_BUFFER_MAX));
  }

  private <T> T value(ConfigKey<T> key) {
    return key.valueIn(values);
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
    Properties p = ConfigFiles.read(file);
    try {
      return fromProperties(p);
    } catch (ConfigException e) {
      throw new ConfigException(file + ": " + e.getMessage(), e);
    }
  }

  /**
   * The environment variable that sets {@code key}: {@code FENCEKEEPER_} and the key in upper case
   * with {@code .} and {@code -} as {@code _}, e.g. {@code node.id} is {@code FENCEKEEPER_NODE_ID}
   * and {@code limits.value.max-bytes} is {@code FENCEKEEPER_LIMITS_VALUE_MAX_BYTES}.
   */
  public static String environmentVariable(String key) {
    return ConfigEnvironment.variable(key);
  }

  /** Every key's environment variable, in {@link #store} order. */
  public static List<String> environmentVariables() {
    return Keys.NAMES.stream().map(ClusterConfig::environmentVariable).toList();
  }

  /**
   * A server's config: the properties file (if {@code file} is not null), each key overridden by
   * its environment variable ({@link #environmentVariable}) when that is set, as container
   * platforms expect — except {@code peers} and {@code endpoints}, which come only from the file:
   * {@code FENCEKEEPER_PEERS} and {@code FENCEKEEPER_ENDPOINTS} are what a shell exports for its
   * clients, and must not change a node's membership. Other {@code FENCEKEEPER_} variables (the
   * command line's own, such as {@code FENCEKEEPER_DATA_DIR}) are not keys and are left alone.
   *
   * @throws ConfigException naming the file and the variables used, and the key and value at fault
   */
  public static ClusterConfig load(Path file, Map<String, String> env) {
    return ConfigEnvironment.load(file, env);
  }

  /**
   * Builds a config from properties (docs/configuration.md lists keys and defaults). Every problem
   * found is reported in one exception, one line per key. Unknown keys are errors, so a typo such
   * as {@code lease.ttl.mni} cannot silently leave the default in force.
   */
  public static ClusterConfig fromProperties(Properties p) {
    // Cross-key rules (min <= max, node.id among peers, ...) only make sense once every key parsed.
    return new ClusterConfig(ConfigReader.read(p));
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
   * A client's view of a cluster: {@code host:port,...} of the nodes' client ports (ids n1, n2, ...
   * assigned in order). A Raft peer address ({@code n1@host:port}) is refused with the client port
   * to give instead.
   *
   * @throws ConfigException naming the entry at fault
   */
  public static ClusterConfig forEndpoints(String commaSeparated) {
    Map<ConfigKey<?>, Object> values = ConfigReader.defaults();
    values.put(Keys.ENDPOINTS, Keys.ENDPOINTS.check(Keys.ENDPOINTS.parse(commaSeparated.trim())));
    return new ClusterConfig(values);
  }

  /**
   * The CLI's {@code --peers}: either all {@code host:port} (ids n1, n2, ... assigned in order) or
   * all {@code id@host:port}. Mixing the two is refused: an assigned id could collide with a given
   * one.
   */
  public static ClusterConfig forPeers(String commaSeparated) {
    return withDefaults(PeerAddress.parseList(Keys.PEERS.name(), commaSeparated, true));
  }

  private static ClusterConfig withDefaults(List<PeerAddress> peers) {
    Map<ConfigKey<?>, Object> values = ConfigReader.defaults();
    values.put(Keys.PEERS, peers);
    return new ClusterConfig(values);
  }

  // ---------------------------------------------------------------------------------------------
  // Accessors

  public String clusterName() {
    return value(Keys.CLUSTER_NAME);
  }

  /** The Raft members; empty in a client's config that names only {@link #endpoints()}. */
  public List<PeerAddress> peers() {
    List<PeerAddress> peers = value(Keys.PEERS);
    return peers == null ? List.of() : peers;
  }

  /**
   * The nodes' client ports as a client's config names them ({@code endpoints}, ids n1, n2, ... in
   * order); empty when it names the cluster by {@code peers}. {@link #clientAddresses()} is where
   * clients connect either way.
   */
  public List<PeerAddress> endpoints() {
    List<PeerAddress> endpoints = value(Keys.ENDPOINTS);
    return endpoints == null ? List.of() : endpoints;
  }

  public Optional<String> nodeId() {
    return Optional.ofNullable(value(Keys.NODE_ID));
  }

  /** The member this process is. */
  public PeerAddress self() {
    String nodeId = value(Keys.NODE_ID);
    if (nodeId == null) {
      throw new ConfigException(
          Keys.NODE_ID
              + ": missing; set it to the peer this process runs as, one of "
              + PeerAddress.ids(peers()));
    }
    return peers().stream().filter(peer -> peer.id().equals(nodeId)).findFirst().orElseThrow();
  }

  /** {@code storage.dir} if set, else {@code ./data/<node.id>}, else {@code ./data}. */
  public Path storageDir() {
    Path explicit = value(Keys.STORAGE_DIR);
    if (explicit != null) {
      return explicit;
    }
    return nodeId().map(DEFAULT_STORAGE_ROOT::resolve).orElse(DEFAULT_STORAGE_ROOT);
  }

  /**
   * {@code log.dir}: where a node writes its rolling log file instead of logging to stderr; empty
   * when it logs to stderr.
   */
  public Optional<Path> logDir() {
    return Optional.ofNullable(value(Keys.LOG_DIR));
  }

  public Limits limits() {
    return limits;
  }

  public long snapshotAutoTriggerEntries() {
    return value(Keys.SNAPSHOT_AUTO_TRIGGER_ENTRIES);
  }

  /**
   * {@code raft.stuck-follower.restart-after}: how long a follower may answer INCONSISTENCY without
   * its match index moving before the leader restarts replicating to it; zero: Ratis's own log
   * appender, without the workaround.
   */
  public Duration stuckFollowerRestartAfter() {
    return value(Keys.STUCK_FOLLOWER_RESTART_AFTER);
  }

  public Duration electionTimeoutMin() {
    return value(Keys.ELECTION_TIMEOUT_MIN);
  }

  public Duration electionTimeoutMax() {
    return value(Keys.ELECTION_TIMEOUT_MAX);
  }

  public Duration requestTimeout() {
    return value(Keys.CLIENT_REQUEST_TIMEOUT);
  }

  public long clockOffsetMs() {
    return value(Keys.CLOCK_OFFSET).toMillis();
  }

  public int metricsPort() {
    return value(Keys.METRICS_PORT);
  }

  /**
   * How many log entries this node's applied index may trail the leader's commit index while {@code
   * /health} answers ready.
   */
  public int healthMaxApplyLag() {
    return value(Keys.HEALTH_MAX_APPLY_LAG);
  }

  /**
   * How long a follower may stay behind the leader's log, its match index not advancing, before the
   * leader counts it as lagging: {@code /health} on the leader then says redundancy is degraded,
   * and a leadership transfer to it is refused.
   */
  public Duration healthMaxFollowerLag() {
    return value(Keys.HEALTH_MAX_FOLLOWER_LAG);
  }

  /**
   * The address this node's Raft port (server, client and admin services) listens on: {@code bind}
   * if set ({@code 0.0.0.0} or {@code ::} for every interface), else this node's own host in {@code
   * peers}, so a node listens only where its peers and clients are told to reach it.
   *
   * @throws ConfigException if no node id is set
   */
  public String bindHost() {
    String bind = value(Keys.BIND);
    return bind != null ? bind : self().host();
  }

  /**
   * The address {@code /metrics} and {@code /health} listen on: {@code metrics.bind}, else {@link
   * #bindHost()}.
   */
  public String metricsBindHost() {
    String bind = value(Keys.METRICS_BIND);
    return bind != null ? bind : bindHost();
  }

  /**
   * This node's client port: {@code client.port}, else its Raft port + {@value
   * #CLIENT_PORT_OFFSET}.
   *
   * @throws ConfigException if no node id is set
   */
  public int clientPort() {
    Integer explicit = value(Keys.CLIENT_PORT);
    return explicit != null ? explicit : defaultClientPort(self());
  }

  /**
   * The address this node's client port listens on: {@code client.bind}, else {@link #bindHost()}.
   */
  public String clientBindHost() {
    String bind = value(Keys.CLIENT_BIND);
    return bind != null ? bind : bindHost();
  }

  /**
   * This node's client address, as clients reach it: its host in {@code peers} and {@link
   * #clientPort()}.
   *
   * @throws ConfigException if no node id is set
   */
  public PeerAddress clientAddress() {
    PeerAddress self = self();
    return new PeerAddress(self.id(), self.host(), clientPort());
  }

  /**
   * Where clients connect: {@code endpoints} when the config names them; else the client address of
   * every member, in {@code peers} order: each peer's host and Raft port + {@value
   * #CLIENT_PORT_OFFSET}, except this node's own (when {@code node.id} is set), which is {@link
   * #clientAddress()}. The one rule by which the command line, clients and integrations find the
   * client ports of a cluster they know by its {@code peers}; a node whose {@code client.port}
   * departs from it is found through the leader's redirects and {@code NodeStatus}.
   *
   * @throws ConfigException if a peer's Raft port leaves no room for the default client port
   */
  public List<PeerAddress> clientAddresses() {
    List<PeerAddress> endpoints = value(Keys.ENDPOINTS);
    if (endpoints != null) {
      return endpoints;
    }
    String nodeId = value(Keys.NODE_ID);
    List<PeerAddress> addresses = new ArrayList<>();
    for (PeerAddress peer : peers()) {
      addresses.add(
          peer.id().equals(nodeId)
              ? clientAddress()
              : new PeerAddress(peer.id(), peer.host(), defaultClientPort(peer)));
    }
    return List.copyOf(addresses);
  }

  /** The client port {@code peer} has by the default rule. */
  public static int defaultClientPort(PeerAddress peer) {
    return PortRules.defaultClientPort(peer);
  }

  /**
   * Sessions and streams one client identity may hold on a node, and how much a node queues for a
   * stream whose client does not read.
   */
  public StreamLimits streamLimits() {
    return streamLimits;
  }

  /**
   * This node's JSON gateway port: {@code http.port}, else its Raft port + {@value
   * #HTTP_PORT_OFFSET}; 0 when the gateway is off.
   *
   * @throws ConfigException if no node id is set
   */
  public int httpPort() {
    Integer explicit = value(Keys.HTTP_PORT);
    return explicit != null ? explicit : defaultHttpPort(self());
  }

  /** The address the JSON gateway listens on: {@code http.bind}, else {@link #bindHost()}. */
  public String httpBindHost() {
    String bind = value(Keys.HTTP_BIND);
    return bind != null ? bind : bindHost();
  }

  /**
   * The JSON gateway address (host:port) of member {@code id}: this node's own {@link #httpPort()},
   * any other's by the default rule (its Raft port + {@value #HTTP_PORT_OFFSET}); empty for an id
   * that is not a member, or for this node when its gateway is off.
   */
  public Optional<String> httpAddressOf(String id) {
    String nodeId = value(Keys.NODE_ID);
    for (PeerAddress peer : peers()) {
      if (peer.id().equals(id)) {
        int port = peer.id().equals(nodeId) ? httpPort() : defaultHttpPort(peer);
        return port == 0 ? Optional.empty() : Optional.of(peer.host() + ":" + port);
      }
    }
    return Optional.empty();
  }

  /** The gateway port {@code peer} has by the default rule; 0 (none) when that is over 65535. */
  public static int defaultHttpPort(PeerAddress peer) {
    int port = peer.port() + HTTP_PORT_OFFSET;
    return port > 65535 ? 0 : port;
  }

  /** TLS files, admin and node identities. */
  public Security security() {
    return security;
  }

  /** How many writes and reads a node holds at once before it answers OVERLOADED. */
  public Overload overload() {
    return overload;
  }

  // ---------------------------------------------------------------------------------------------
  // Copies

  /** This config with {@code key} set to {@code value} ({@code null}: left out), checked anew. */
  private <T> ClusterConfig with(ConfigKey<T> key, T value) {
    Map<ConfigKey<?>, Object> copy = new HashMap<>(values);
    if (value == null) {
      copy.remove(key);
    } else {
      copy.put(key, value);
    }
    return new ClusterConfig(copy);
  }

  /** This config as seen by member {@code id}; the derived storage dir moves with it. */
  public ClusterConfig withNodeId(String id) {
    if (id == null) {
      throw new ConfigException(
          Keys.NODE_ID + ": missing; expected one of " + PeerAddress.ids(peers()));
    }
    return with(Keys.NODE_ID, id);
  }

  public ClusterConfig withStorageDir(Path dir) {
    return with(Keys.STORAGE_DIR, Keys.STORAGE_DIR.check(dir));
  }

  public ClusterConfig withClockOffsetMs(long offsetMs) {
    return with(Keys.CLOCK_OFFSET, Duration.ofMillis(offsetMs));
  }

  public ClusterConfig withMetricsPort(int port) {
    return with(Keys.METRICS_PORT, port);
  }

  /** This config with {@code client.port} set ({@code null}: the default rule again). */
  public ClusterConfig withClientPort(Integer port) {
    return with(Keys.CLIENT_PORT, port);
  }

  /** This config with {@code bind} set ({@code null}: the node's own host again). */
  public ClusterConfig withBindHost(String host) {
    return with(Keys.BIND, host);
  }

  /**
   * This config with {@code metrics.bind} set ({@code null}: the same as the Raft port's again).
   */
  public ClusterConfig withMetricsBindHost(String host) {
    return with(Keys.METRICS_BIND, host);
  }

  /** This config with other TLS files or admins (e.g. a client's own certificate). */
  public ClusterConfig withSecurity(Security newSecurity) {
    Map<ConfigKey<?>, Object> copy = new HashMap<>(values);
    Objects.requireNonNull(newSecurity, "security").putInto(copy);
    return new ClusterConfig(copy);
  }

  /** This config with other overload bounds. */
  public ClusterConfig withOverload(Overload newOverload) {
    Map<ConfigKey<?>, Object> copy = new HashMap<>(values);
    copy.put(
        Keys.OVERLOAD_PENDING_WRITES_MAX, Objects.requireNonNull(newOverload).maxPendingWrites());
    copy.put(Keys.OVERLOAD_PENDING_READS_MAX, newOverload.maxPendingReads());
    return new ClusterConfig(copy);
  }

  // ---------------------------------------------------------------------------------------------
  // Writing

  /**
   * Every setting as properties that {@link #fromProperties} turns back into an equal config. Keys
   * without a value ({@code node.id}, {@code storage.dir}, ...) appear only when set, so a derived
   * storage dir stays derived; so does a value written as nothing ({@code authz.admins} naming no
   * one), since an empty line would be refused on reading and leaving it out reads back the same.
   */
  public Properties toProperties() {
    Properties p = new Properties();
    for (ConfigKey<?> key : Keys.ALL) {
      String text = formatted(key);
      if (!text.isEmpty()) {
        p.setProperty(key.name(), text);
      }
    }
    return p;
  }

  private <T> String formatted(ConfigKey<T> key) {
    return key.format(value(key));
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
    ConfigFiles.write(file, toProperties());
  }

  // ---------------------------------------------------------------------------------------------
  // Object

  @Override
  public boolean equals(Object o) {
    return this == o || (o instanceof ClusterConfig c && values.equals(c.values));
  }

  @Override
  public int hashCode() {
    return values.hashCode();
  }

  /** Every key as {@code key=value}; a key without a value shows what stands in for it. */
  @Override
  public String toString() {
    return Keys.ALL.stream()
        .map(key -> key + "=" + (values.containsKey(key) ? formatted(key) : key.defaultDoc()))
        .collect(Collectors.joining(", ", "ClusterConfig{", "}"));
  }
}
