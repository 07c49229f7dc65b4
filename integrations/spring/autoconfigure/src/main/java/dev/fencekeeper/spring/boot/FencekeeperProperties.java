package dev.fencekeeper.spring.boot;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code fencekeeper.*} settings of a Spring Boot application that uses fencekeeper. */
@ConfigurationProperties("fencekeeper")
public class FencekeeperProperties {
  /**
   * The nodes' client ports as host:port, comma-separated, e.g.
   * 10.0.0.1:7501,10.0.0.2:7501,10.0.0.3:7501 (each node's client.port, by default its Raft port +
   * 200). The client bean is created only when this (or the deprecated peers) is set.
   */
  private String endpoints;

  /**
   * Deprecated: the cluster's Raft members as id@host:port, comma-separated; use endpoints. Read
   * only when endpoints is not set.
   */
  private String peers;

  /** The cluster's name; it must match the nodes' cluster.name, which derives the Raft group id. */
  private String clusterName;

  /**
   * The owner label of this application's leases (shown to other holders); host:pid when not set.
   */
  private String owner;

  /**
   * How long one request may take before the client retries it (the nodes' client.request.timeout).
   */
  private Duration requestTimeout;

  private final Tls tls = new Tls();

  /**
   * Any other cluster setting by its cluster-properties key (e.g. raft.election.timeout.min); the
   * dedicated properties above win over these.
   */
  private Map<String, String> cluster = new LinkedHashMap<>();

  private final ShedLock shedlock = new ShedLock();

  private final LockRegistry lockRegistry = new LockRegistry();

  private final Health health = new Health();

  private final Jdbc jdbc = new Jdbc();

  public String getEndpoints() {
    return endpoints;
  }

  public void setEndpoints(String endpoints) {
    this.endpoints = endpoints;
  }

  /**
   * The deprecated {@code fencekeeper.peers}.
   *
   * @deprecated name the nodes' client ports with {@link #getEndpoints() fencekeeper.endpoints}
   */
  @Deprecated
  @org.springframework.boot.context.properties.DeprecatedConfigurationProperty(
      replacement = "fencekeeper.endpoints",
      reason = "clients reach the nodes' client ports, not their Raft ports")
  public String getPeers() {
    return peers;
  }

  /**
   * Sets the deprecated {@code fencekeeper.peers}.
   *
   * @deprecated set {@link #setEndpoints fencekeeper.endpoints}
   */
  @Deprecated
  public void setPeers(String peers) {
    this.peers = peers;
  }

  public String getClusterName() {
    return clusterName;
  }

  public void setClusterName(String clusterName) {
    this.clusterName = clusterName;
  }

  public String getOwner() {
    return owner;
  }

  public void setOwner(String owner) {
    this.owner = owner;
  }

  public Duration getRequestTimeout() {
    return requestTimeout;
  }

  public void setRequestTimeout(Duration requestTimeout) {
    this.requestTimeout = requestTimeout;
  }

  public Tls getTls() {
    return tls;
  }

  public Map<String, String> getCluster() {
    return cluster;
  }

  public void setCluster(Map<String, String> cluster) {
    this.cluster = cluster;
  }

  public ShedLock getShedlock() {
    return shedlock;
  }

  public LockRegistry getLockRegistry() {
    return lockRegistry;
  }

  public Health getHealth() {
    return health;
  }

  public Jdbc getJdbc() {
    return jdbc;
  }

  /** Mutual TLS: every node and client presents a certificate signed by the trusted CA. */
  public static class Tls {
    /** PEM certificate chain this application presents to the nodes. */
    private Path cert;

    /** PEM private key of that certificate. */
    private Path key;

    /** PEM CA certificate(s) the nodes' certificates must chain to. */
    private Path trust;

    public Path getCert() {
      return cert;
    }

    public void setCert(Path cert) {
      this.cert = cert;
    }

    public Path getKey() {
      return key;
    }

    public void setKey(Path key) {
      this.key = key;
    }

    public Path getTrust() {
      return trust;
    }

    public void setTrust(Path trust) {
      this.trust = trust;
    }
  }

  /** The ShedLock LockProvider, configured when shedlock-spring is on the class path. */
  public static class ShedLock {
    /** Whether to provide the ShedLock LockProvider bean. */
    private boolean enabled = true;

    /** Prepended to each ShedLock lock name to form the fencekeeper resource, e.g. "shedlock/". */
    private String resourcePrefix = "";

    /**
     * Whether a running task's lock is renewed to its lockAtMostFor about every third of it, so
     * only a paused or dead instance loses it after lockAtMostFor; by default it ends at
     * lockAtMostFor, as ShedLock expects.
     */
    private boolean keepAlive = false;

    /**
     * Whether each granted lock first raises the JdbcFence guard row of its resource to its token
     * (one short transaction), so the previous holder's transactions are refused from the moment
     * this one holds the lock, not only from its first write. Applies when the application has a
     * JdbcFence; if raising fails, the lock is released and the run skipped.
     */
    private boolean fenceAtAcquire = true;

    public boolean isFenceAtAcquire() {
      return fenceAtAcquire;
    }

    public void setFenceAtAcquire(boolean fenceAtAcquire) {
      this.fenceAtAcquire = fenceAtAcquire;
    }

    public boolean isKeepAlive() {
      return keepAlive;
    }

    public void setKeepAlive(boolean keepAlive) {
      this.keepAlive = keepAlive;
    }

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getResourcePrefix() {
      return resourcePrefix;
    }

    public void setResourcePrefix(String resourcePrefix) {
      this.resourcePrefix = resourcePrefix;
    }
  }

  /**
   * The Spring Integration LockRegistry, configured when spring-integration-core is on the class
   * path.
   */
  public static class LockRegistry {
    /** Whether to provide the LockRegistry bean. */
    private boolean enabled = true;

    /** Prepended to each lock key to form the fencekeeper resource, e.g. "locks/". */
    private String resourcePrefix = "";

    /**
     * TTL of each lock's lease; the lease renews itself while held, so this bounds a crashed
     * holder.
     */
    private Duration ttl = Duration.ofSeconds(30);

    /**
     * With a JdbcFence, raise each granted lock's guard row to its token before lock() returns, so
     * a previous holder is refused from then on, not only from this holder's first write.
     */
    private boolean fenceAtAcquire = true;

    public boolean isEnabled() {
      return enabled;
    }

    public boolean isFenceAtAcquire() {
      return fenceAtAcquire;
    }

    public void setFenceAtAcquire(boolean fenceAtAcquire) {
      this.fenceAtAcquire = fenceAtAcquire;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getResourcePrefix() {
      return resourcePrefix;
    }

    public void setResourcePrefix(String resourcePrefix) {
      this.resourcePrefix = resourcePrefix;
    }

    public Duration getTtl() {
      return ttl;
    }

    public void setTtl(Duration ttl) {
      this.ttl = ttl;
    }
  }

  /** The Actuator health indicator (management.health.fencekeeper.enabled switches it off). */
  public static class Health {
    /** How long each node may take to answer the health check. */
    private Duration timeout = Duration.ofSeconds(2);

    public Duration getTimeout() {
      return timeout;
    }

    public void setTimeout(Duration timeout) {
      this.timeout = timeout;
    }
  }

  /** The JdbcFence bean, configured when the application has a single DataSource. */
  public static class Jdbc {
    /** Whether to provide the JdbcFence bean. */
    private boolean enabled = true;

    /** The fence table, optionally schema-qualified. */
    private String table = "fencekeeper_fence";

    /**
     * Whether the fence creates its table on first use; leave false when the application's
     * migrations create it (fencekeeper-jdbc ships them under db/fencekeeper/).
     */
    private boolean createTable = false;

    /**
     * How long raising a guard row at acquire waits for an older holder's transaction to release it
     * (whole seconds, at least 1s).
     */
    private Duration advanceLockWait = Duration.ofSeconds(5);

    private final Flyway flyway = new Flyway();

    public Duration getAdvanceLockWait() {
      return advanceLockWait;
    }

    public void setAdvanceLockWait(Duration advanceLockWait) {
      this.advanceLockWait = advanceLockWait;
    }

    public Flyway getFlyway() {
      return flyway;
    }

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getTable() {
      return table;
    }

    public void setTable(String table) {
      this.table = table;
    }

    public boolean isCreateTable() {
      return createTable;
    }

    public void setCreateTable(boolean createTable) {
      this.createTable = createTable;
    }
  }

  /**
   * fencekeeper's own Flyway run for the fence table, with a history table of its own, so its
   * versions never meet the application's. Runs when Flyway is on the class path.
   */
  public static class Flyway {
    /** Whether to migrate the fence table with fencekeeper's own Flyway run at start-up. */
    private boolean enabled = true;

    /** The history table of fencekeeper's Flyway run, apart from the application's. */
    private String table = "fencekeeper_schema_history";

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getTable() {
      return table;
    }

    public void setTable(String table) {
      this.table = table;
    }
  }
}
