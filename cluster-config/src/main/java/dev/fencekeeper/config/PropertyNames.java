package dev.fencekeeper.config;

/**
 * The names of the configuration properties that code outside this module writes into a {@link
 * java.util.Properties} before handing it to {@link ClusterConfig#fromProperties}: a client's
 * settings, the Spring Boot binding, the local cluster launcher. Each is the name its key is
 * defined with (docs/configuration.md lists every key), so a renamed key cannot leave a stale copy
 * behind.
 */
public final class PropertyNames {
  private PropertyNames() {}

  /** {@code peers}: the members, {@code host:port,...}. */
  public static final String PEERS = Keys.PEERS.name();

  /** {@code endpoints}: a client's view of the cluster, the nodes' client ports. */
  public static final String ENDPOINTS = Keys.ENDPOINTS.name();

  /** {@code cluster.name}: the name every member and client must agree on. */
  public static final String CLUSTER_NAME = Keys.CLUSTER_NAME.name();

  /** {@code client.request.timeout}: how long one client attempt may take. */
  public static final String CLIENT_REQUEST_TIMEOUT = Keys.CLIENT_REQUEST_TIMEOUT.name();

  /** {@code tls.cert}: this member's or client's PEM certificate chain. */
  public static final String TLS_CERT = Keys.TLS_CERT.name();

  /** {@code tls.key}: the PKCS#8 PEM private key of {@link #TLS_CERT}. */
  public static final String TLS_KEY = Keys.TLS_KEY.name();

  /** {@code tls.trust}: the PEM certificates a member or client trusts. */
  public static final String TLS_TRUST = Keys.TLS_TRUST.name();

  /** {@code snapshot.auto-trigger.entries}: log entries applied between two snapshots. */
  public static final String SNAPSHOT_AUTO_TRIGGER_ENTRIES =
      Keys.SNAPSHOT_AUTO_TRIGGER_ENTRIES.name();

  /** {@code node.id}: which member this node is. */
  public static final String NODE_ID = Keys.NODE_ID.name();

  /** {@code storage.dir}: where a node keeps its Raft log and snapshots. */
  public static final String STORAGE_DIR = Keys.STORAGE_DIR.name();

  /** {@code log.dir}: where a node writes its log files. */
  public static final String LOG_DIR = Keys.LOG_DIR.name();

  /** {@code metrics.port}: a node's health and metrics port. */
  public static final String METRICS_PORT = Keys.METRICS_PORT.name();

  /** {@code client.port}: a node's client protocol port. */
  public static final String CLIENT_PORT = Keys.CLIENT_PORT.name();

  /** {@code http.port}: a node's JSON gateway port. */
  public static final String HTTP_PORT = Keys.HTTP_PORT.name();

  /** {@code clock.offset}: a node's deliberate clock offset (drills). */
  public static final String CLOCK_OFFSET = Keys.CLOCK_OFFSET.name();
}
