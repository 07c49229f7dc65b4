package dev.fencekeeper.client;

import static dev.fencekeeper.client.ClusterCalls.join;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.ValidateRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * The embedded fencekeeper client. Thread-safe; one per process is plenty.
 *
 * <pre>{@code
 * try (FencingClient client = FencingClient.connect(ClusterConfig.load(path));
 *      Lease lease = client.acquire("daily-sales-report", Duration.ofSeconds(30))) {
 *   WriteResult r = lease.write("2026-11-29", reportBytes);   // carries lease.token()
 *   if (!r.isAccepted()) {
 *     // not written: r.code() says why (STALE_TOKEN: someone newer owns it, stop; UNAVAILABLE:
 *     // no node answered, retry with a request id); or call lease.write(...).orThrow()
 *   }
 * }
 * }</pre>
 *
 * <p>Every call has a {@code CompletableFuture} twin ({@code ...Async}). Leader changes are
 * absorbed here. The client speaks fencekeeper's client protocol to the nodes' client ports: it
 * follows a follower's NOT_LEADER answer to the leader and re-sends a command whose answer was lost
 * unchanged, so its request id applies it at most once; and one session stream renews every lease
 * it holds, one log entry per keep-alive, and brings their ends back as they commit. Reads that
 * fail during an election are retried too.
 */
public final class FencingClient implements AutoCloseable {
  private final ClusterConfig config;
  private final String defaultOwner;
  private final Duration closeTimeout;
  private final ClusterCalls calls;
  // The one session that renews every lease this client holds and brings their events.
  private final LeaseSession session;
  private final Acquisitions acquisitions;
  private final FencedWrites writes;
  // Set first thing in close(): every call made from then on throws IllegalStateException.
  private volatile boolean closed;

  private FencingClient(Builder settings) {
    this.config = ClientSettings.effectiveConfig(settings);
    this.defaultOwner =
        settings.owner != null ? settings.owner : ClientSettings.defaultOwnerLabel();
    this.closeTimeout = settings.closeTimeout;
    this.calls = new ClusterCalls(config, settings);
    RequestIds requestIds = new RequestIds();
    this.writes = new FencedWrites(calls, requestIds);
    LeaseCalls leaseCalls = new LeaseSide();
    this.session = new LeaseSession(leaseCalls, calls.port(), defaultOwner);
    this.acquisitions = new Acquisitions(leaseCalls, session, defaultOwner, requestIds);
  }

  /** What this client's leases, session and acquisitions call back into. */
  private final class LeaseSide implements LeaseCalls {
    @Override
    public CompletableFuture<Result> renew(String resource, long token) {
      return renewAsync(resource, token, null);
    }

    @Override
    public CompletableFuture<Result> release(String resource, long token) {
      return releaseUnchecked(resource, token);
    }

    @Override
    public CompletableFuture<WriteResult> write(
        String resource, long token, List<KeyChange> changes, String requestId) {
      return writeAsync(resource, token, changes, requestId);
    }

    @Override
    public CompletableFuture<Result> leaseQuery(String resource) {
      return FencingClient.this.leaseQuery(resource);
    }

    @Override
    public void forget(Lease lease, boolean endedOnCluster) {
      acquisitions.forget(lease, endedOnCluster);
    }

    @Override
    public ClusterCalls calls() {
      return calls;
    }
  }

  /** Connects to the cluster described by {@code config}; nodes are contacted lazily. */
  public static FencingClient connect(ClusterConfig config) {
    return builder().config(config).build();
  }

  /**
   * As {@link #connect(ClusterConfig)}, labelling leases with {@code owner} unless a call names
   * one.
   */
  public static FencingClient connect(ClusterConfig config, String owner) {
    return builder().config(config).owner(owner).build();
  }

  /**
   * Settings for a new client: endpoints or a cluster file, TLS, timeouts, owner label, executor,
   * metrics.
   */
  public static Builder builder() {
    return new Builder();
  }

  /** The cluster description this client was built from. */
  public ClusterConfig config() {
    return config;
  }

  /**
   * True when, for the whole {@code unreachableTimeout} up to now, no node could be contacted and
   * connections were refused: nothing this client sent in that time reached a node. (An election,
   * where nodes answer but none leads, or a slow node is not this.)
   */
  public boolean clusterUnreachable() {
    return calls.clusterUnreachable();
  }

  /** What the latest call saw of the cluster. */
  public ConnectionState connectionState() {
    return calls.connectionState();
  }

  /**
   * Calls {@code listener} on {@code executor} with every later change of {@link
   * #connectionState()}, in order. A change is noticed by a call: a renewal, or the application's
   * own.
   */
  public void onConnectionStateChange(Executor executor, Consumer<ConnectionState> listener) {
    calls.onConnectionStateChange(executor, listener);
  }

  /** How this client's calls reach the cluster; for the lease, session and watch plumbing. */
  ClusterCalls calls() {
    return calls;
  }

  /** This client's request latency, retries, leader redirects and lost leases. */
  public ClientMetrics metrics() {
    return calls.metrics();
  }

  // -----------------------------------------------------------------------------------------------
  // Leases with background renewal.

  /**
   * Acquires {@code resource} for {@code ttl} and keeps renewing it until closed or lost.
   *
   * @throws LeaseHeldException if another live lease holds it
   * @throws FencingException on invalid input or when no node answers
   * @throws CancellationException if the calling thread is interrupted (its interrupt status is
   *     kept)
   */
  public Lease acquire(String resource, Duration ttl) {
    return join(acquireAsync(resource, ttl, defaultOwner));
  }

  /** As {@link #acquire(String, Duration)}, labelled {@code owner}. */
  public Lease acquire(String resource, Duration ttl, String owner) {
    return join(acquireAsync(resource, ttl, owner));
  }

  /**
   * The asynchronous form of {@link #acquire(String, Duration)}. Cancelling the future, or
   * completing it first any other way ({@code orTimeout}), releases a grant that arrives afterwards
   * at once.
   */
  public CompletableFuture<Lease> acquireAsync(String resource, Duration ttl) {
    return acquireAsync(resource, ttl, defaultOwner);
  }

  /**
   * Acquires {@code resource}, waiting up to {@code waitTimeout} for it to become free. Waiters are
   * served in arrival order; the queue is replicated, so a leader change keeps it.
   *
   * @throws LeaseHeldException if the wait ends first (the place in line is given up)
   * @throws CancellationException if the calling thread is interrupted: the place in line is given
   *     up, a grant that raced with it is released, and the thread's interrupt status is kept
   */
  public Lease acquire(String resource, Duration ttl, Duration waitTimeout) {
    return join(
        acquireAsync(resource, ttl, waitTimeout, AcquireOptions.defaults().owner(defaultOwner)));
  }

  /**
   * The asynchronous form of {@link #acquire(String, Duration, Duration)}. Cancelling the future
   * (or completing it first, as {@code orTimeout} does) gives the place in line up and releases a
   * grant that raced with it.
   */
  public CompletableFuture<Lease> acquireAsync(
      String resource, Duration ttl, Duration waitTimeout) {
    return acquireAsync(resource, ttl, waitTimeout, AcquireOptions.defaults().owner(defaultOwner));
  }

  /** The general form: owner, request id and lock-delay in {@code options}. */
  public Lease acquire(
      String resource, Duration ttl, Duration waitTimeout, AcquireOptions options) {
    return join(acquireAsync(resource, ttl, waitTimeout, options));
  }

  /** The general form: owner, request id and lock-delay in {@code options}. */
  public CompletableFuture<Lease> acquireAsync(
      String resource, Duration ttl, Duration waitTimeout, AcquireOptions options) {
    ensureOpen();
    return acquisitions.acquireAsync(resource, ttl, waitTimeout, options);
  }

  /**
   * Acquires {@code resource} if it is free now, with the same self-renewing {@link Lease} as
   * {@link #acquire}; empty if another lease holds it (or waiters are queued, or a lock-delay
   * runs).
   *
   * @throws FencingException on invalid input or when no node answers
   */
  public Optional<Lease> tryAcquire(String resource, Duration ttl) {
    return join(tryAcquireAsync(resource, ttl, AcquireOptions.defaults()));
  }

  /**
   * As {@link #tryAcquire(String, Duration)} with owner, request id and lock-delay in {@code
   * options}.
   */
  public Optional<Lease> tryAcquire(String resource, Duration ttl, AcquireOptions options) {
    return join(tryAcquireAsync(resource, ttl, options));
  }

  /** The asynchronous form of {@link #tryAcquire(String, Duration)}. */
  public CompletableFuture<Optional<Lease>> tryAcquireAsync(String resource, Duration ttl) {
    return tryAcquireAsync(resource, ttl, AcquireOptions.defaults());
  }

  /** The asynchronous form of {@link #tryAcquire(String, Duration, AcquireOptions)}. */
  public CompletableFuture<Optional<Lease>> tryAcquireAsync(
      String resource, Duration ttl, AcquireOptions options) {
    ensureOpen();
    return acquisitions.leaseFrom(resource, ttl, options, true);
  }

  /** As {@link #acquire(String, Duration, String)}, asynchronously. */
  public CompletableFuture<Lease> acquireAsync(String resource, Duration ttl, String owner) {
    ensureOpen();
    java.util.Objects.requireNonNull(owner, "owner must not be null");
    return acquisitions.leaseFrom(resource, ttl, AcquireOptions.defaults().owner(owner), false);
  }

  // -----------------------------------------------------------------------------------------------
  // Raw commands: one request each, no background work. For tools and callers managing tokens.

  /**
   * One acquire attempt: GRANTED with a token, or HELD naming the holder. Nothing renews it and
   * nothing releases it: the caller manages the token (as the command line does).
   */
  public Result acquireToken(String resource, Duration ttl, String owner) {
    return join(acquireTokenAsync(resource, ttl, owner));
  }

  /** The asynchronous form of {@link #acquireToken(String, Duration, String)}. */
  public CompletableFuture<Result> acquireTokenAsync(String resource, Duration ttl, String owner) {
    return acquireTokenAsync(resource, ttl, AcquireOptions.defaults().owner(owner));
  }

  /**
   * One acquire attempt with options. Every attempt carries a request id (generated when the
   * options name none), so a retry after a lost reply returns the same lease instead of a second
   * one.
   */
  public Result acquireToken(String resource, Duration ttl, AcquireOptions options) {
    return join(acquireTokenAsync(resource, ttl, options));
  }

  /** The asynchronous form of {@link #acquireToken(String, Duration, AcquireOptions)}. */
  public CompletableFuture<Result> acquireTokenAsync(
      String resource, Duration ttl, AcquireOptions options) {
    ensureOpen();
    Acquisitions.checkAcquire(resource, ttl, options);
    // Nothing keeps a raw token alive: it is acquired outside the session.
    return calls
        .command(Rpc.ACQUIRE, acquisitions.acquireRequest(resource, ttl, options, ""))
        .thenApply(Result::new);
  }

  /** Renews lease {@code token}; a null {@code ttl} keeps the lease's own TTL. */
  public Result renew(String resource, long token, Duration ttl) {
    return join(renewAsync(resource, token, ttl));
  }

  /** The asynchronous form of {@link #renew(String, long, Duration)}. */
  public CompletableFuture<Result> renewAsync(String resource, long token, Duration ttl) {
    ensureOpen();
    java.util.Objects.requireNonNull(resource, "resource must not be null");
    RenewRequest.Builder renew = RenewRequest.newBuilder().setResource(resource).setToken(token);
    if (ttl != null) {
      renew.setTtlMs(ttl.toMillis());
    }
    return calls.command(Rpc.RENEW, renew.build()).thenApply(Result::new);
  }

  /** Ends lease {@code token}: RELEASED (also when it had already ended), or NOT_HOLDER. */
  public Result release(String resource, long token) {
    return join(releaseAsync(resource, token));
  }

  /** The asynchronous form of {@link #release(String, long)}. */
  public CompletableFuture<Result> releaseAsync(String resource, long token) {
    ensureOpen();
    java.util.Objects.requireNonNull(resource, "resource must not be null");
    return releaseUnchecked(resource, token);
  }

  /** A release without the closed check: {@link #close()} itself releases leases this way. */
  private CompletableFuture<Result> releaseUnchecked(String resource, long token) {
    return calls
        .command(
            Rpc.RELEASE, ReleaseRequest.newBuilder().setResource(resource).setToken(token).build())
        .thenApply(Result::new);
  }

  /** Writes one key fenced by {@code token}. */
  public WriteResult write(String resource, long token, String key, byte[] value) {
    ensureOpen();
    return write(resource, token, List.of(KeyChange.put(key, value)), null);
  }

  /**
   * Changes every key in {@code changes} atomically, fenced by {@code token}. {@code requestId}
   * makes a retry of the same logical write safe; when null, a fresh id is generated for this call
   * (its own transport retries are still deduplicated).
   */
  public WriteResult write(String resource, long token, List<KeyChange> changes, String requestId) {
    return join(writeAsync(resource, token, changes, requestId));
  }

  /** The asynchronous form of {@link #write(String, long, List, String)}. */
  public CompletableFuture<WriteResult> writeAsync(
      String resource, long token, List<KeyChange> changes, String requestId) {
    ensureOpen();
    java.util.Objects.requireNonNull(resource, "resource must not be null");
    java.util.Objects.requireNonNull(changes, "changes must not be null");
    for (KeyChange change : changes) {
      java.util.Objects.requireNonNull(change, "changes must not contain null");
    }
    return writes.writeAsync(resource, token, changes, requestId);
  }

  // -----------------------------------------------------------------------------------------------
  // Queries.

  /** Reads a protected value, linearizably. */
  public ReadResult read(String resource, String key) {
    return read(resource, key, ReadConsistency.LINEARIZABLE);
  }

  /**
   * Reads a protected value with the given consistency (a stale read may be answered by any node).
   */
  public ReadResult read(String resource, String key, ReadConsistency consistency) {
    return join(readAsync(resource, key, consistency));
  }

  /** The asynchronous form of {@link #read(String, String, ReadConsistency)}. */
  public CompletableFuture<ReadResult> readAsync(
      String resource, String key, ReadConsistency consistency) {
    ensureOpen();
    java.util.Objects.requireNonNull(resource, "resource must not be null");
    java.util.Objects.requireNonNull(key, "key must not be null");
    java.util.Objects.requireNonNull(consistency, "consistency must not be null");
    return calls
        .query(
            Rpc.READ,
            ReadRequest.newBuilder()
                .setResource(resource)
                .setKey(key)
                .setConsistency(ClusterCalls.wire(consistency))
                .build(),
            consistency)
        .thenApply(ReadResult::new);
  }

  /** The live lease of {@code resource}, if any, and the newest token issued for it. */
  public Result lease(String resource) {
    return join(leaseAsync(resource));
  }

  /** The asynchronous form of {@link #lease(String)}. */
  public CompletableFuture<Result> leaseAsync(String resource) {
    ensureOpen();
    java.util.Objects.requireNonNull(resource, "resource must not be null");
    return leaseQuery(resource);
  }

  /** The lease query without the closed check, for the session's own checks. */
  CompletableFuture<Result> leaseQuery(String resource) {
    return calls
        .query(
            Rpc.LEASE,
            LeaseQuery.newBuilder().setResource(resource).build(),
            ReadConsistency.LINEARIZABLE)
        .thenApply(Result::new);
  }

  /**
   * Whether {@code token} is the live lease of {@code resource}: CURRENT, STALE or EXPIRED
   * (UNKNOWN_TOKEN if never issued) — for services that fence their own writes with fencekeeper's
   * tokens.
   */
  public Result validate(String resource, long token) {
    return join(validateAsync(resource, token));
  }

  /** The asynchronous form of {@link #validate(String, long)}. */
  public CompletableFuture<Result> validateAsync(String resource, long token) {
    ensureOpen();
    java.util.Objects.requireNonNull(resource, "resource must not be null");
    return calls
        .query(
            Rpc.VALIDATE,
            ValidateRequest.newBuilder().setResource(resource).setToken(token).build(),
            ReadConsistency.LINEARIZABLE)
        .thenApply(Result::new);
  }

  /**
   * One page of resources whose name starts with {@code prefix} (with their live lease, if any),
   * after {@code after} in name order. The entries are for fencekeeper's own tools (the command
   * line's {@code leases list}); applications read single leases with {@link #lease(String)}.
   */
  public Result listLeases(String prefix, String after, int limit) {
    ensureOpen();
    return join(list(ListRequest.What.LEASES, "", prefix, after, limit));
  }

  /** One page of the keys of {@code resource} starting with {@code prefix}, after {@code after}. */
  public Result listKeys(String resource, String prefix, String after, int limit) {
    ensureOpen();
    return join(list(ListRequest.What.KEYS, resource, prefix, after, limit));
  }

  private CompletableFuture<Result> list(
      ListRequest.What what, String resource, String prefix, String after, int limit) {
    return calls
        .query(
            Rpc.LIST,
            ListRequest.newBuilder()
                .setWhat(what)
                .setResource(resource)
                .setPrefix(prefix)
                .setAfter(after)
                .setLimit(limit)
                .build(),
            ReadConsistency.LINEARIZABLE)
        .thenApply(Result::new);
  }

  /**
   * Writes a consistent copy of the whole state — leases, values, receipts and the token sequence —
   * to {@code file} (replaced atomically, readable by this user alone: it holds every protected
   * value). The answer carries the backup's size in {@code totalBytes}, its newest token in {@code
   * currentToken()} and its resource count in {@code version()}. Seed a new cluster from it with
   * {@code fencekeeper restore}.
   */
  public Result backup(java.nio.file.Path file) {
    ensureOpen();
    java.util.Objects.requireNonNull(file, "file must not be null");
    return BackupDownload.to(calls, file);
  }

  /**
   * Ends the live lease of {@code resource} whoever holds it (operator action). The holder's later
   * writes are rejected and its {@link Lease} reports the loss.
   */
  public Result revoke(String resource, String reason) {
    ensureOpen();
    java.util.Objects.requireNonNull(resource, "resource must not be null");
    return join(
        calls
            .command(
                Rpc.REVOKE,
                RevokeRequest.newBuilder()
                    .setResource(resource)
                    .setReason(reason == null ? "" : reason)
                    .build())
            .thenApply(Result::new));
  }

  /**
   * Watches lease events on one resource ({@code prefix == false}) or on every resource starting
   * with {@code name}, delivering them to {@code listener} in commit order, starting with the
   * events of the first log entry after index {@code afterIndex} (a {@link LeaseEvent#index()} or
   * {@link Watch#lastIndex()} seen before); pass {@link Watch#FROM_NOW} to start with the next
   * event. Resumes by itself after errors and leader changes, without gaps or duplicates. {@link
   * Watch#close()} stops it.
   */
  public Watch watch(String name, boolean prefix, long afterIndex, Consumer<LeaseEvent> listener) {
    ensureOpen();
    java.util.Objects.requireNonNull(name, "name must not be null");
    java.util.Objects.requireNonNull(listener, "listener must not be null");
    return new Watch(calls, name, prefix, afterIndex, e -> listener.accept(LeaseEvent.of(e)));
  }

  /**
   * What node {@code peerId} says about itself, asked of that node alone (not through the leader).
   *
   * @throws FencingException with {@link ResultCode#UNAVAILABLE} if it does not answer within
   *     {@code timeout}
   */
  public NodeStatus nodeStatus(String peerId, Duration timeout) {
    ensureOpen();
    java.util.Objects.requireNonNull(peerId, "peerId must not be null");
    java.util.Objects.requireNonNull(timeout, "timeout must not be null");
    return calls.nodeStatus(peerId, timeout);
  }

  /**
   * Refuses a call on a closed client: its threads and connections are gone, so nothing could be
   * sent.
   *
   * @throws IllegalStateException once {@link #close()} has begun
   */
  void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("this FencingClient is closed; build a new one");
    }
  }

  /**
   * Gives up every waiting acquire, releases every lease this client still holds (not the abandoned
   * ones), and closes the connections. Waits for those answers at most the close timeout ({@link
   * Builder#closeTimeout}, 5 s by default); a lease whose release is not answered by then expires
   * by its TTL. Listeners are not told of leases released here.
   */
  @Override
  public void close() {
    closed = true;
    if (!acquisitions.giveBackAll(System.nanoTime() + closeTimeout.toNanos(), closeTimeout)) {
      return;
    }
    session.close();
    // The channels first, while the client's threads still run: a call they cancel finishes on
    // those threads (with them stopped, gRPC reports "Panic!"), and a channel whose calls cannot
    // finish waits out its whole termination bound.
    calls.closePort();
    calls.stopThreads();
  }

  /**
   * Settings of a new {@link FencingClient}. Name the cluster with {@link #endpoints} (the nodes'
   * client ports) or {@link #config}; everything else has a default.
   *
   * <pre>{@code
   * FencingClient client = FencingClient.builder()
   *     .endpoints("10.0.0.1:7501,10.0.0.2:7501,10.0.0.3:7501")
   *     .tls(Path.of("client.crt"), Path.of("client.key"), Path.of("ca.crt"))
   *     .owner("report-worker-7")
   *     .build();
   * }</pre>
   */
  public static final class Builder {
    ClusterConfig config;
    String peers;
    String endpoints;
    String clusterName;
    Security.TlsFiles tlsFiles;
    javax.net.ssl.KeyManager keyManager;
    javax.net.ssl.TrustManager trustManager;
    Duration requestTimeout;
    Duration callTimeout;
    Duration unreachableTimeout = Duration.ofSeconds(3);
    Duration closeTimeout = Duration.ofSeconds(5);
    String owner;
    Executor callbackExecutor;
    // A Dropwizard MetricRegistry, held as Object so the builder never loads metrics-core itself.
    Object metricRegistry;

    private Builder() {}

    /**
     * Where the cluster serves clients: {@code host:port,...} of the nodes' client ports ({@code
     * client.port}, by default each node's Raft port + 200), e.g. {@code
     * 10.0.0.1:7501,10.0.0.2:7501}. A Raft peer address ({@code n1@host:port}) is refused by {@link
     * #build()} with the client port to give instead. Replaces a {@link #config} or {@link #peers}
     * given before.
     */
    public Builder endpoints(String commaSeparated) {
      this.endpoints = java.util.Objects.requireNonNull(commaSeparated, "endpoints");
      this.peers = null;
      this.config = null;
      return this;
    }

    /** As {@link #endpoints(String)}, one {@code host:port} per element. */
    public Builder endpoints(List<String> hostPorts) {
      java.util.Objects.requireNonNull(hostPorts, "endpoints");
      if (hostPorts.isEmpty()) {
        throw new IllegalArgumentException("endpoints: name at least one host:port");
      }
      return endpoints(String.join(",", hostPorts));
    }

    /**
     * The cluster's Raft members: {@code host:port,...} (ids n1, n2, ... in order) or {@code
     * id@host:port,...}, as the nodes' {@code peers=} line lists them; the client connects to each
     * one's client port by the default rule (Raft port + 200). Replaces a {@link #config} or {@link
     * #endpoints} given before.
     *
     * @deprecated name the nodes' client ports with {@link #endpoints(String)}: a client has no use
     *     for Raft addresses, and a node whose {@code client.port} is not the default is not found
     *     from them
     */
    @Deprecated
    public Builder peers(String commaSeparated) {
      this.peers = java.util.Objects.requireNonNull(commaSeparated, "peers");
      this.endpoints = null;
      this.config = null;
      return this;
    }

    /**
     * The cluster's name (the nodes' {@code cluster.name}), from which its Raft group id derives;
     * needed with {@link #peers} when the nodes do not use the default name ({@code fencekeeper},
     * as {@code up} does).
     */
    public Builder clusterName(String name) {
      this.clusterName = java.util.Objects.requireNonNull(name, "clusterName");
      return this;
    }

    /**
     * A cluster description (e.g. {@code ClusterConfig.load(path)}), with its peers and TLS files.
     */
    public Builder config(ClusterConfig clusterConfig) {
      this.config = java.util.Objects.requireNonNull(clusterConfig, "config");
      this.peers = null;
      this.endpoints = null;
      return this;
    }

    /**
     * Mutual TLS from PEM files: this client's certificate chain, its PKCS#8 key, the CA it trusts.
     */
    public Builder tls(
        java.nio.file.Path certificate,
        java.nio.file.Path privateKey,
        java.nio.file.Path trustedCa) {
      this.tlsFiles = new Security.TlsFiles(certificate, privateKey, trustedCa);
      this.keyManager = null;
      this.trustManager = null;
      return this;
    }

    /**
     * Mutual TLS from key stores: {@code keyStore} holds this client's key and certificate chain
     * (opened with {@code keyPassword}), {@code trustStore} the CA certificates it trusts for the
     * nodes.
     */
    public Builder tls(
        java.security.KeyStore keyStore, char[] keyPassword, java.security.KeyStore trustStore) {
      return tls(
          ClientSettings.keyManager(keyStore, keyPassword),
          ClientSettings.trustManager(trustStore));
    }

    /**
     * Mutual TLS from a key manager and a trust manager — the parts an {@code SSLContext} is made
     * of (the gRPC transport builds its own TLS engine from them, so an {@code SSLContext} itself
     * cannot be used).
     */
    public Builder tls(javax.net.ssl.KeyManager keys, javax.net.ssl.TrustManager trust) {
      this.keyManager = java.util.Objects.requireNonNull(keys, "keys");
      this.trustManager = java.util.Objects.requireNonNull(trust, "trust");
      this.tlsFiles = null;
      return this;
    }

    /**
     * How long one attempt at one node may take (the cluster file's {@code client.request.timeout},
     * 3 s).
     */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = ClientSettings.positive("requestTimeout", timeout);
      return this;
    }

    /**
     * How long one call may take in all, retries through an election included, before it is
     * answered {@code UNAVAILABLE}; default five request timeouts.
     */
    public Builder callTimeout(Duration timeout) {
      this.callTimeout = ClientSettings.positive("callTimeout", timeout);
      return this;
    }

    /**
     * How soon a call is answered {@code UNAVAILABLE} when no node can be reached at all (every one
     * refuses the connection or its host does not resolve); default 3 s. Nodes that answer
     * anything, as during an election, keep a call waiting up to the call timeout instead.
     */
    public Builder unreachableTimeout(Duration timeout) {
      this.unreachableTimeout = ClientSettings.positive("unreachableTimeout", timeout);
      return this;
    }

    /**
     * How long {@link FencingClient#close()} waits for the releases of the leases it holds; default
     * 5 s.
     */
    public Builder closeTimeout(Duration timeout) {
      this.closeTimeout = ClientSettings.positive("closeTimeout", timeout);
      return this;
    }

    /**
     * Has no effect: every {@link Lease} a client holds gets its resource's events (a revoke, an
     * expiry) from the client's session, within about a second, at no cost per lease.
     *
     * @deprecated leases always learn of their end from the session; nothing to turn on or off
     */
    @Deprecated
    public Builder followLeaseEvents(boolean follow) {
      return this;
    }

    /**
     * The owner label of this client's leases, unless a call names one; default {@code host:pid}.
     */
    public Builder owner(String label) {
      this.owner = java.util.Objects.requireNonNull(label, "owner");
      return this;
    }

    /**
     * Where listeners registered without an executor run ({@link Lease#onLost(Consumer)}); default
     * a pool of daemon threads owned by the client. Never the thread that renews leases.
     */
    public Builder callbackExecutor(Executor executor) {
      this.callbackExecutor = java.util.Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * The Dropwizard registry the client's metrics also go into (see {@link ClientMetrics});
     * default a registry of its own when metrics-core is on the class path.
     *
     * @deprecated a third-party type in the client's API; read the figures through {@link
     *     FencingClient#metrics()} instead. Kept for this release.
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public Builder metricRegistry(com.codahale.metrics.MetricRegistry registry) {
      this.metricRegistry = java.util.Objects.requireNonNull(registry, "registry");
      return this;
    }

    /** A client with these settings; it contacts nodes only when the first call is made. */
    public FencingClient build() {
      if (config == null && peers == null && endpoints == null) {
        throw new IllegalStateException("name the cluster: endpoints(...) or config(...)");
      }
      ClientSettings.warnOfCommonPool();
      return new FencingClient(this);
    }
  }
}
