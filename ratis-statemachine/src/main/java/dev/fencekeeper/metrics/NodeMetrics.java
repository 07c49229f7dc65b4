package dev.fencekeeper.metrics;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import com.codahale.metrics.jmx.JmxReporter;
import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.LeaseEvent;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.core.ResourceRecord;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Labels;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's metrics: a Dropwizard {@link MetricRegistry} holding fencekeeper's own figures and a
 * live mirror of Ratis's, exposed over JMX (domain {@code fencekeeper.<nodeId>}) and, when a port
 * is configured, over HTTP ({@code /metrics} in Prometheus text format, {@code /health}).
 *
 * <p>Naming: in the Dropwizard registry (and so over JMX) every metric is {@code
 * fencekeeper.<thing>}, a reason or command being a segment of the name ({@code
 * fencekeeper.writes.rejected.STALE_TOKEN}, {@code fencekeeper.request.WRITE.seconds}). Over HTTP
 * the same figures follow Prometheus's conventions ({@link PrometheusFamilies}): reasons and
 * commands are labels ({@code fencekeeper_writes_rejected_total{reason="STALE_TOKEN"}}), latencies
 * are histograms in seconds ({@code fencekeeper_request_duration_seconds{type="WRITE"}}, kept
 * beside the Dropwizard timers because a Dropwizard reservoir cannot give cumulative buckets), with
 * {@code fencekeeper_build_info}, the client library's JVM metrics and Ratis's metrics in snake
 * case. docs/operations.md lists every name.
 *
 * <p>Where counts come from: outcomes and lease events are counted as this replica applies log
 * entries, so every replica counts every committed command once (replays after a restart included —
 * counters start from zero with the process, as Prometheus expects). Refusals answered on the
 * leader without a log entry, and request latencies, are counted only by the node that was leader
 * at the time.
 */
public final class NodeMetrics implements StateMachineMetrics, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeMetrics.class);

  public static final String ACQUISITIONS_GRANTED = "fencekeeper.acquisitions.granted";
  public static final String ACQUISITIONS_HELD = "fencekeeper.acquisitions.held";
  public static final String ACQUISITIONS_WAITED = "fencekeeper.acquisitions.waited";
  public static final String RENEWALS = "fencekeeper.renewals";
  public static final String RELEASES = "fencekeeper.releases";
  public static final String EXPIRIES = "fencekeeper.expiries";
  public static final String REVOCATIONS = "fencekeeper.revocations";
  public static final String WRITES_ACCEPTED = "fencekeeper.writes.accepted";
  public static final String WRITES_DEDUPLICATED = "fencekeeper.writes.deduplicated";
  public static final String WRITES_REJECTED = "fencekeeper.writes.rejected"; // + "." + reason
  public static final String REQUESTS_INVALID = "fencekeeper.requests.invalid";
  public static final String REQUESTS_DENIED = "fencekeeper.requests.denied";
  public static final String REQUESTS_OVERLOADED = "fencekeeper.requests.overloaded";
  public static final String READS_OVERLOADED = "fencekeeper.reads.overloaded";
  public static final String BATCH_COMMANDS = "fencekeeper.batch.commands"; // per batched log entry
  public static final String APPLY_SECONDS = "fencekeeper.apply.seconds";
  public static final String REQUEST = "fencekeeper.request"; // + "." + command + ".seconds"
  public static final String LEASES_LIVE = "fencekeeper.leases.live";
  public static final String WAITERS = "fencekeeper.waiters";
  public static final String RESOURCES = "fencekeeper.resources";
  public static final String KEYS = "fencekeeper.keys";
  public static final String STORED_BYTES = "fencekeeper.stored.bytes";
  public static final String TERM = "fencekeeper.raft.term";
  public static final String LEADER_CHANGES = "fencekeeper.raft.leader.changes";
  public static final String ELECTIONS_ON_LEADER_LOSS = "fencekeeper.raft.elections.on-leader-loss";
  public static final String LEADER_KNOWN = "fencekeeper.raft.leader.known";
  public static final String LEADING = "fencekeeper.raft.leading";
  public static final String APPLIED_INDEX = "fencekeeper.raft.applied.index";
  public static final String COMMIT_INDEX = "fencekeeper.raft.commit.index";
  public static final String SNAPSHOT_INDEX = "fencekeeper.snapshot.index";
  public static final String SNAPSHOT_TIMESTAMP = "fencekeeper.snapshot.timestamp.seconds";

  /** Request latency buckets, seconds: sub-millisecond applies up to multi-second stalls. */
  private static final double[] REQUEST_SECONDS_BUCKETS = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
  };

  /** Apply-time buckets, seconds: one command's apply is microseconds unless something is wrong. */
  private static final double[] APPLY_SECONDS_BUCKETS = {
    0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.01, 0.1
  };

  private static final double[] BATCH_COMMANDS_BUCKETS = {2, 4, 8, 16, 32, 64, 128, 256};

  /**
   * 1 while the node's storage has at least its free-space reserve, 0 once the node stopped for
   * want of it.
   */
  public static final String STORAGE_WRITABLE = "fencekeeper.storage.writable";

  public static final String STORAGE_FREE_BYTES = "fencekeeper.storage.free.bytes";

  /** The write rejections counted by reason. */
  public static final List<Code> REJECTION_REASONS =
      List.of(Code.STALE_TOKEN, Code.LEASE_EXPIRED, Code.UNKNOWN_TOKEN, Code.INVALID_ARGUMENT);

  /** The commands whose request latency is timed, as they appear in metric names. */
  public static final List<String> COMMANDS =
      List.of(
          "ACQUIRE",
          "RENEW",
          "RELEASE",
          "WRITE",
          "REVOKE",
          "CANCEL_WAIT",
          "RENEW_SESSION",
          "TAKEOVER",
          "TICK");

  /** How long {@code /health} waits for the applied index to reach the commit index it read. */
  static final Duration HEALTH_CATCH_UP_WAIT = Duration.ofMillis(250);

  /** How long one pass over the resources (live leases, waiters) serves the gauges. */
  private static final long CENSUS_TTL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  private final String nodeId;
  private final MetricRegistry registry = new MetricRegistry();
  private final Counter granted;
  private final Counter held;
  private final Counter waited;
  private final Counter renewals;
  private final Counter releases;
  private final Counter expiries;
  private final Counter revocations;
  private final Counter writesAccepted;
  private final Counter writesDeduplicated;
  private final Map<Code, Counter> writesRejected = new EnumMap<>(Code.class);
  private final Counter invalidRequests;
  private final Counter deniedRequests;
  private final Counter overloadedRequests;
  private final Counter overloadedReads;
  private final Histogram batchCommands;
  private final Counter leaderChanges;
  private final Counter electionsOnLeaderLoss;
  private final Timer applyTimer;
  private final Map<String, Timer> requestTimers = new LinkedHashMap<>();
  private final StoredValues stored = new StoredValues();
  // What /metrics serves; a registry of our own, not the JVM-wide default, as several nodes may
  // share a JVM.
  private final PrometheusRegistry prometheus = new PrometheusRegistry();
  private final io.prometheus.metrics.core.metrics.Histogram requestSeconds;
  private final io.prometheus.metrics.core.metrics.Histogram applySeconds;
  private final io.prometheus.metrics.core.metrics.Histogram batchCommandsHistogram;

  private volatile Binding binding;
  private volatile Census census;
  private final AutoCloseable ratisMirror;
  private JmxReporter jmx;
  private MetricsHttpServer http;
  private boolean closed;

  private NodeMetrics(String nodeId) {
    this.nodeId = nodeId;
    granted = registry.counter(ACQUISITIONS_GRANTED);
    held = registry.counter(ACQUISITIONS_HELD);
    waited = registry.counter(ACQUISITIONS_WAITED);
    renewals = registry.counter(RENEWALS);
    releases = registry.counter(RELEASES);
    expiries = registry.counter(EXPIRIES);
    revocations = registry.counter(REVOCATIONS);
    writesAccepted = registry.counter(WRITES_ACCEPTED);
    writesDeduplicated = registry.counter(WRITES_DEDUPLICATED);
    for (Code reason : REJECTION_REASONS) {
      writesRejected.put(reason, registry.counter(rejectedName(reason)));
    }
    invalidRequests = registry.counter(REQUESTS_INVALID);
    deniedRequests = registry.counter(REQUESTS_DENIED);
    overloadedRequests = registry.counter(REQUESTS_OVERLOADED);
    overloadedReads = registry.counter(READS_OVERLOADED);
    batchCommands = registry.histogram(BATCH_COMMANDS);
    leaderChanges = registry.counter(LEADER_CHANGES);
    electionsOnLeaderLoss = registry.counter(ELECTIONS_ON_LEADER_LOSS);
    applyTimer = registry.timer(APPLY_SECONDS);
    for (String command : COMMANDS) {
      requestTimers.put(command, registry.timer(requestName(command)));
    }
    gauge(LEASES_LIVE, () -> census().map(Census::liveLeases));
    gauge(WAITERS, () -> census().map(Census::waiters));
    gauge(RESOURCES, () -> census().map(Census::resources));
    gauge(
        KEYS,
        () ->
            readState(
                state -> {
                  stored.track(state);
                  return stored.keys();
                }));
    gauge(
        STORED_BYTES,
        () ->
            readState(
                state -> {
                  stored.track(state);
                  return stored.bytes();
                }));
    gauge(TERM, () -> division(d -> d.getInfo().getCurrentTerm()));
    gauge(LEADER_KNOWN, () -> division(d -> d.getInfo().getLeaderId() != null ? 1L : 0L));
    gauge(LEADING, () -> division(d -> d.getInfo().isLeader() ? 1L : 0L));
    gauge(APPLIED_INDEX, () -> division(d -> d.getInfo().getLastAppliedIndex()));
    gauge(COMMIT_INDEX, () -> division(d -> d.getRaftLog().getLastCommittedIndex()));
    gauge(SNAPSHOT_INDEX, () -> snapshot().map(SnapshotInfo::getIndex));
    gauge(SNAPSHOT_TIMESTAMP, () -> snapshot().flatMap(NodeMetrics::snapshotTimestampSeconds));

    requestSeconds =
        io.prometheus.metrics.core.metrics.Histogram.builder()
            .name("fencekeeper_request_duration_seconds")
            .help(
                "On the leader, from the request reaching the state machine until its entry is"
                    + " applied")
            .labelNames("type")
            .classicOnly()
            .classicUpperBounds(REQUEST_SECONDS_BUCKETS)
            .register(prometheus);
    for (String command : COMMANDS) {
      requestSeconds.labelValues(command); // every type is exported from the start, at zero
    }
    applySeconds =
        io.prometheus.metrics.core.metrics.Histogram.builder()
            .name("fencekeeper_apply_duration_seconds")
            .help("Time inside the state machine's apply per command, on every replica")
            .classicOnly()
            .classicUpperBounds(APPLY_SECONDS_BUCKETS)
            .register(prometheus);
    batchCommandsHistogram =
        io.prometheus.metrics.core.metrics.Histogram.builder()
            .name("fencekeeper_batch_commands")
            .help("Commands per batched log entry, on every replica")
            .classicOnly()
            .classicUpperBounds(BATCH_COMMANDS_BUCKETS)
            .register(prometheus);
    prometheus.register(families());
    Properties build = buildProperties();
    Info.builder()
        .name("fencekeeper_build_info")
        .help("The fencekeeper build this node runs")
        .labelNames("version", "ratis_version")
        .register(prometheus)
        .setLabelValues(
            build.getProperty("version", "unknown"), build.getProperty("ratis.version", "unknown"));
    JvmMetrics.builder().register(prometheus);
    // Last: from here on Ratis registries of this peer are mirrored, so build the RaftServer after
    // this.
    this.ratisMirror = RatisMetricsBridge.attach(nodeId, registry);
  }

  /**
   * fencekeeper's own Dropwizard counters and gauges as Prometheus families, labelled where they
   * are one family.
   */
  private PrometheusFamilies families() {
    PrometheusFamilies f = new PrometheusFamilies(registry);
    f.counter(
        "fencekeeper_acquisitions_granted",
        "Leases granted, grants to queued waiters included",
        granted);
    f.counter(
        "fencekeeper_acquisitions_held",
        "Acquires refused because the resource is held or in lock-delay",
        held);
    f.counter("fencekeeper_acquisitions_waited", "Acquires queued behind the holder", waited);
    f.counter("fencekeeper_renewals", "Leases renewed", renewals);
    f.counter("fencekeeper_releases", "Live leases released", releases);
    f.counter("fencekeeper_expiries", "Leases that ran out", expiries);
    f.counter("fencekeeper_revocations", "Leases ended by an operator's revoke", revocations);
    f.counter("fencekeeper_writes_accepted", "Fenced writes applied", writesAccepted);
    f.counter(
        "fencekeeper_writes_deduplicated",
        "Retried writes answered from their receipt",
        writesDeduplicated);
    List<PrometheusFamilies.Series> rejected = new ArrayList<>();
    writesRejected.forEach(
        (reason, counter) ->
            rejected.add(
                new PrometheusFamilies.Series(
                    Labels.of("reason", reason.name()), counter::getCount)));
    f.counter("fencekeeper_writes_rejected", "Fenced writes refused, by result code", rejected);
    f.counter(
        "fencekeeper_requests_invalid",
        "Other commands refused as INVALID_ARGUMENT",
        invalidRequests);
    f.counter(
        "fencekeeper_requests_denied", "Requests refused as PERMISSION_DENIED", deniedRequests);
    f.counter(
        "fencekeeper_requests_overloaded",
        "Requests refused as OVERLOADED, reads included",
        overloadedRequests);
    f.counter("fencekeeper_reads_overloaded", "Reads refused as OVERLOADED", overloadedReads);
    f.counter(
        "fencekeeper_raft_leader_changes", "Times this node learned of a leader", leaderChanges);
    f.counter(
        "fencekeeper_raft_elections_on_leader_loss",
        "Elections started at once because the leader's process was gone",
        electionsOnLeaderLoss);
    gaugeFamily(f, "fencekeeper_leases_live", "Leases live at state-machine time", LEASES_LIVE);
    gaugeFamily(f, "fencekeeper_waiters", "Acquires queued, over all resources", WAITERS);
    gaugeFamily(f, "fencekeeper_resources", "Resource records held", RESOURCES);
    gaugeFamily(f, "fencekeeper_keys", "Protected keys stored", KEYS);
    gaugeFamily(f, "fencekeeper_stored_bytes", "Value bytes stored", STORED_BYTES);
    gaugeFamily(f, "fencekeeper_raft_term", "This node's current Raft term", TERM);
    gaugeFamily(
        f, "fencekeeper_raft_leader_known", "1 if this node knows a leader, else 0", LEADER_KNOWN);
    gaugeFamily(f, "fencekeeper_raft_leading", "1 on the leader, else 0", LEADING);
    gaugeFamily(
        f, "fencekeeper_raft_applied_index", "Last log index this node applied", APPLIED_INDEX);
    gaugeFamily(f, "fencekeeper_raft_commit_index", "Commit index this node knows", COMMIT_INDEX);
    gaugeFamily(
        f,
        "fencekeeper_snapshot_last_index",
        "Log index of this node's newest snapshot",
        SNAPSHOT_INDEX);
    gaugeFamily(
        f,
        "fencekeeper_snapshot_last_timestamp_seconds",
        "When this node's newest snapshot was written (Unix time)",
        SNAPSHOT_TIMESTAMP);
    return f;
  }

  private void gaugeFamily(PrometheusFamilies f, String name, String help, String dropwizardName) {
    Gauge<?> g = registry.getGauges().get(dropwizardName);
    f.gauge(name, help, () -> (Number) g.getValue());
  }

  private static Properties buildProperties() {
    Properties p = new Properties();
    try (InputStream in = NodeMetrics.class.getResourceAsStream("build.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      LOG.debug("build.properties unreadable: {}", e.toString());
    }
    return p;
  }

  /**
   * Creates the metrics of node {@code nodeId} and starts mirroring its Ratis metrics. Call before
   * that node's RaftServer is built, so none of Ratis's registries is missed.
   */
  public static NodeMetrics create(String nodeId) {
    return new NodeMetrics(nodeId);
  }

  public static String rejectedName(Code reason) {
    return WRITES_REJECTED + "." + reason.name();
  }

  public static String requestName(String command) {
    return REQUEST + "." + command + ".seconds";
  }

  private volatile Supplier<String> storageProblem = () -> null;

  /**
   * Where {@code /health} and the storage gauges learn whether the node can persist: {@code
   * problem} is null while it can, else why not; {@code freeBytes} the free space last measured.
   */
  public void watchStorage(Supplier<String> problem, java.util.function.LongSupplier freeBytes) {
    this.storageProblem = problem;
    registry.gauge(STORAGE_WRITABLE, () -> () -> problem.get() == null ? 1L : 0L);
    registry.gauge(STORAGE_FREE_BYTES, () -> freeBytes::getAsLong);
  }

  /** Gives the gauges their sources: the node's Raft division and its state machine. */
  public void bind(RaftServer server, RaftGroupId groupId, StateReader stateMachine) {
    this.binding = new Binding(server, groupId, stateMachine);
  }

  /** Starts the JMX reporter and, when {@code httpPort > 0}, the HTTP endpoint on {@code host}. */
  public synchronized void startExporters(String host, int httpPort) throws IOException {
    if (closed) {
      throw new IllegalStateException("metrics of " + nodeId + " are closed");
    }
    if (jmx == null) {
      jmx = JmxReporter.forRegistry(registry).inDomain(jmxDomain()).build();
      jmx.start();
    }
    if (httpPort > 0 && http == null) {
      http = MetricsHttpServer.start(host, httpPort, prometheus, this::health);
      LOG.info(
          "{}: metrics on http://{}:{}/metrics, readiness on /health", nodeId, host, http.port());
    }
  }

  public MetricRegistry registry() {
    return registry;
  }

  /**
   * What {@code /metrics} serves: fencekeeper's families, latency histograms, JVM and Ratis
   * metrics.
   */
  public PrometheusRegistry prometheusRegistry() {
    return prometheus;
  }

  public String nodeId() {
    return nodeId;
  }

  /** The JMX domain of this node's beans: {@code fencekeeper.<nodeId>}. */
  public String jmxDomain() {
    return "fencekeeper." + nodeId;
  }

  /** The port the HTTP endpoint listens on, or -1 when it is not running. */
  @Override
  public synchronized int httpPort() {
    return http == null ? -1 : http.port();
  }

  /**
   * Stops the HTTP endpoint and the JMX reporter (unregistering its beans) and the Ratis mirror.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (http != null) {
      http.close();
      http = null;
    }
    if (jmx != null) {
      jmx.stop();
      jmx = null;
    }
    try {
      ratisMirror.close();
    } catch (Exception e) {
      LOG.warn("{}: stopping the Ratis metrics mirror failed", nodeId, e);
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Readiness

  /** The answer of {@code /health}: ready, or why not, in one line. */
  public record Health(boolean ready, String message) {}

  /**
   * Ready when this node knows a leader and has applied everything it knows to be committed. The
   * commit index is read first; the applied index is then given up to {@link #HEALTH_CATCH_UP_WAIT}
   * to reach it, so a node that is merely mid-apply under load still reads as ready, while one that
   * is really behind (or cut off from the leader) does not.
   */
  public Health health() {
    String storage = storageProblem.get();
    if (storage != null) {
      return new Health(false, "not ready: cannot persist: " + storage);
    }
    Binding b = binding;
    if (b == null) {
      return new Health(false, "not ready: the Raft server has not started");
    }
    RaftServer.Division d;
    try {
      d = b.server.getDivision(b.groupId);
    } catch (IOException e) {
      return new Health(false, "not ready: the Raft server is not running");
    }
    if (!d.getInfo().isAlive()) {
      return new Health(false, "not ready: the Raft server is not running");
    }
    RaftPeerId leader = d.getInfo().getLeaderId();
    if (leader == null) {
      return new Health(
          false,
          "not ready: no leader known ("
              + d.getInfo().getCurrentRole()
              + ", term "
              + d.getInfo().getCurrentTerm()
              + ")");
    }
    long commit = d.getRaftLog().getLastCommittedIndex();
    long deadline = System.nanoTime() + HEALTH_CATCH_UP_WAIT.toNanos();
    long applied = d.getInfo().getLastAppliedIndex();
    while (applied < commit && System.nanoTime() < deadline) {
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      applied = d.getInfo().getLastAppliedIndex();
    }
    if (applied < commit) {
      return new Health(
          false, "not ready: applied index " + applied + " is behind commit index " + commit);
    }
    return new Health(true, "ready");
  }

  // -----------------------------------------------------------------------------------------------
  // Hooks called by the state machine

  private record RequestStart(long nanos) {}

  @Override
  public Object requestStarted() {
    return new RequestStart(System.nanoTime());
  }

  @Override
  public void denied(String operation, String caller, String message) {
    deniedRequests.inc();
    LOG.warn("{}: PERMISSION_DENIED {} from '{}': {}", nodeId, operation, caller, message);
  }

  /**
   * Counted twice: among all overloaded requests, and among the reads, so operators see which bound
   * bit.
   */
  @Override
  public void readOverloaded(String caller) {
    overloadedRequests.inc();
    overloadedReads.inc();
  }

  /**
   * Counts a refusal before the log: an overload, a denied revoke, or a request that does not
   * decode. Writes are judged in apply only, so none is counted here.
   */
  @Override
  public void refusedEarly(Command command, Outcome refusal) {
    Code code = refusal.code();
    if (code == Code.OVERLOADED) {
      overloadedRequests.inc(command instanceof Command.Batch b ? b.commands().size() : 1);
    } else if (code == Code.PERMISSION_DENIED) {
      denied(command == null ? "request" : commandName(command), "", refusal.message());
    } else if (code == Code.INVALID_ARGUMENT) {
      invalidRequests.inc();
    }
  }

  @Override
  public void applied(Command command, Outcome outcome, long applyNanos, Object requestContext) {
    try {
      applyTimer.update(applyNanos, TimeUnit.NANOSECONDS);
      applySeconds.observe(applyNanos / 1e9);
      count(command, outcome);
      if (outcome.code() == Code.PERMISSION_DENIED) {
        deniedRequests.inc();
        if (requestContext instanceof RequestStart) {
          LOG.warn("{}: PERMISSION_DENIED {}: {}", nodeId, commandName(command), outcome.message());
        }
      }
      if (command instanceof Command.Write && outcome.code() == Code.ACCEPTED) {
        stored.applied(outcome.facts());
      }
      if (requestContext instanceof RequestStart s) {
        long nanos = System.nanoTime() - s.nanos();
        requestTimers.get(commandName(command)).update(nanos, TimeUnit.NANOSECONDS);
        requestSeconds.labelValues(commandName(command)).observe(nanos / 1e9);
        // A context means this node stamped the entry as leader: exactly one replica logs the
        // rejection.
        if (command instanceof Command.Write w && outcome.code() != Code.ACCEPTED) {
          logRejection(w, outcome);
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("{}: metrics failed after apply; figures may be off", nodeId, e);
    }
  }

  private void logRejection(Command.Write w, Outcome refusal) {
    try {
      RejectionLog.log(
          w,
          refusal.code().name(),
          refusal.sentToken(),
          refusal.currentToken(),
          refusal.holderOwner(),
          refusal.key());
    } catch (RuntimeException e) {
      LOG.warn("{}: logging a rejected write failed", nodeId, e);
    }
  }

  @Override
  public void batchApplied(int commands) {
    batchCommands.update(commands);
    batchCommandsHistogram.observe(commands);
  }

  @Override
  public void leaseEvents(List<LeaseEvent> events) {
    for (LeaseEvent e : events) {
      switch (e.type()) {
        case ACQUIRED -> granted.inc();
        case RENEWED -> renewals.inc();
        case RELEASED -> releases.inc();
        case EXPIRED -> expiries.inc();
        case REVOKED -> revocations.inc();
        default -> {}
      }
    }
  }

  @Override
  public void leaderChanged(RaftPeerId newLeader) {
    leaderChanges.inc();
  }

  /**
   * This node started an election at once because its leader's process was gone (LeaderLossWatch).
   */
  public void electionStartedOnLeaderLoss() {
    electionsOnLeaderLoss.inc();
  }

  private void count(Command command, Outcome outcome) {
    Code code = outcome.code();
    if (command instanceof Command.Write) {
      if (code == Code.ACCEPTED) {
        (outcome.facts().deduplicated() ? writesDeduplicated : writesAccepted).inc();
      } else {
        Counter c = writesRejected.get(code);
        if (c != null) {
          c.inc();
        }
      }
      return;
    }
    if (code == Code.INVALID_ARGUMENT) {
      invalidRequests.inc();
    } else if (command instanceof Command.Acquire) {
      if (code == Code.HELD || code == Code.LOCK_DELAYED) {
        held.inc();
      } else if (code == Code.WAITING && !outcome.facts().requeued()) {
        waited.inc(); // a queued client re-sends its acquire to stay queued: that is not a new wait
      }
    }
    // Grants, renewals, releases, expiries and revocations are counted from lease events: a grant
    // to a waiter has no GRANTED outcome of its own, and a retried acquire's GRANTED is not a new
    // lease.
  }

  static String commandName(Command command) {
    if (command instanceof Command.Acquire) {
      return "ACQUIRE";
    } else if (command instanceof Command.Renew) {
      return "RENEW";
    } else if (command instanceof Command.Release) {
      return "RELEASE";
    } else if (command instanceof Command.Write) {
      return "WRITE";
    } else if (command instanceof Command.Revoke) {
      return "REVOKE";
    } else if (command instanceof Command.CancelWait) {
      return "CANCEL_WAIT";
    } else if (command instanceof Command.RenewSession) {
      return "RENEW_SESSION";
    } else if (command instanceof Command.Takeover) {
      return "TAKEOVER";
    } else {
      return "TICK";
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Gauges

  private record Binding(RaftServer server, RaftGroupId groupId, StateReader stateMachine) {}

  /** One pass over the resources: O(resources), never O(keys). */
  private record Census(long liveLeases, long waiters, long resources, long takenAtNanos) {}

  private void gauge(String name, Supplier<Optional<Long>> value) {
    registry.register(
        name,
        (Gauge<Long>)
            () -> {
              try {
                return value.get().orElse(null);
              } catch (RuntimeException e) {
                return null; // no value: the Prometheus bridge skips it, JMX shows null
              }
            });
  }

  private Optional<Census> census() {
    Census c = census;
    if (c != null && System.nanoTime() - c.takenAtNanos() < CENSUS_TTL_NANOS) {
      return Optional.of(c);
    }
    Optional<Census> fresh =
        readState(
            state -> {
              long live = 0;
              long waiting = 0;
              long now = state.nowMs();
              for (ResourceRecord r : state.resources().values()) {
                if (r.liveLease(now) != null) {
                  live++;
                }
                waiting += r.waiters().size();
              }
              return new Census(live, waiting, state.resources().size(), System.nanoTime());
            });
    fresh.ifPresent(value -> census = value);
    return fresh;
  }

  /** Runs {@code reader} under the state machine's read lock; empty before {@link #bind}. */
  private <T> Optional<T> readState(Function<FencingState, T> reader) {
    Binding b = binding;
    return b == null ? Optional.empty() : Optional.ofNullable(b.stateMachine().read(reader));
  }

  private Optional<SnapshotInfo> snapshot() {
    Binding b = binding;
    if (b == null) {
      return Optional.empty();
    }
    try {
      return Optional.ofNullable(
          b.server().getDivision(b.groupId()).getStateMachine().getLatestSnapshot());
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** The modification time of the snapshot's first file: when this node wrote or installed it. */
  private static Optional<Long> snapshotTimestampSeconds(SnapshotInfo info) {
    List<FileInfo> files = info.getFiles();
    if (files == null || files.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Files.getLastModifiedTime(files.get(0).getPath()).toMillis() / 1000);
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private Optional<Long> division(Function<RaftServer.Division, Long> reader) {
    Binding b = binding;
    if (b == null) {
      return Optional.empty();
    }
    try {
      return Optional.ofNullable(reader.apply(b.server().getDivision(b.groupId())));
    } catch (IOException e) {
      return Optional.empty();
    }
  }
}
