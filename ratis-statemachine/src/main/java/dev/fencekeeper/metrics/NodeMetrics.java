package dev.fencekeeper.metrics;

import com.codahale.metrics.Counter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.jmx.JmxReporter;
import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.LeaseEvent;
import dev.fencekeeper.core.Outcome;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's metrics: a Dropwizard {@link MetricRegistry} holding fencekeeper's own figures (every
 * one declared in {@link NodeMetric}) and a live mirror of Ratis's ({@link RatisMetricsBridge}),
 * exposed over JMX (domain {@code fencekeeper.<nodeId>}) and, when a port is configured, over HTTP
 * ({@code /metrics} in the Prometheus formats, rendered from the registry by {@link
 * PrometheusExport} beside the JVM's standard metrics; {@code /health}). docs/operations.md lists
 * every name.
 *
 * <p>Where counts come from: outcomes and lease events are counted as this replica applies log
 * entries, so every replica counts every committed command once (replays after a restart included:
 * counters start from zero with the process, as Prometheus expects). Refusals answered on the
 * leader without a log entry, and request latencies, are counted only by the node that was leader
 * at the time.
 */
public final class NodeMetrics implements StateMachineMetrics, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeMetrics.class);

  /** How long {@code /health} waits for the applied index to reach the commit index it read. */
  static final Duration HEALTH_CATCH_UP_WAIT = Duration.ofMillis(250);

  private final String nodeId;
  private final MetricRegistry registry = new MetricRegistry();
  private final NodeSeries series = new NodeSeries(registry);
  private final NodeGauges gauges;
  private final FollowerGauges followerGauges;
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
  private final TlsRefusals tlsRefusals;
  private final BucketedHistogram batchCommands;
  private final Counter leaderChanges;
  private final Counter electionsOnLeaderLoss;
  private final BucketedTimer applyTimer;
  private final Map<String, BucketedTimer> requestTimers = new LinkedHashMap<>();
  // What /metrics serves; a registry of our own, not the JVM-wide default, as several nodes may
  // share a JVM.
  private final PrometheusRegistry prometheus = new PrometheusRegistry();
  private volatile Supplier<String> storageProblem = () -> null;
  private volatile LongSupplier storageFreeBytes;
  private volatile Readiness readiness;
  private volatile Supplier<Long> clockOffsetMs = () -> null;
  private volatile Duration maxFollowerLag = Duration.ofSeconds(10);

  private final AutoCloseable ratisMirror;
  private JmxReporter jmx;
  private MetricsHttpServer http;
  private boolean closed;

  private NodeMetrics(String nodeId) {
    this.nodeId = nodeId;
    granted = series.counter(NodeMetric.ACQUISITIONS_GRANTED);
    held = series.counter(NodeMetric.ACQUISITIONS_HELD);
    waited = series.counter(NodeMetric.ACQUISITIONS_WAITED);
    renewals = series.counter(NodeMetric.RENEWALS);
    releases = series.counter(NodeMetric.RELEASES);
    expiries = series.counter(NodeMetric.EXPIRIES);
    revocations = series.counter(NodeMetric.REVOCATIONS);
    writesAccepted = series.counter(NodeMetric.WRITES_ACCEPTED);
    writesDeduplicated = series.counter(NodeMetric.WRITES_DEDUPLICATED);
    for (Code reason : NodeMetric.REJECTION_REASONS) {
      writesRejected.put(reason, series.counter(NodeMetric.WRITES_REJECTED, reason.name()));
    }
    invalidRequests = series.counter(NodeMetric.REQUESTS_INVALID);
    deniedRequests = series.counter(NodeMetric.REQUESTS_DENIED);
    overloadedRequests = series.counter(NodeMetric.REQUESTS_OVERLOADED);
    overloadedReads = series.counter(NodeMetric.READS_OVERLOADED);
    tlsRefusals = new TlsRefusals(series, System::nanoTime);
    leaderChanges = series.counter(NodeMetric.LEADER_CHANGES);
    electionsOnLeaderLoss = series.counter(NodeMetric.ELECTIONS_ON_LEADER_LOSS);
    // Every type is exported from the start, at zero.
    for (String command : NodeMetric.COMMANDS) {
      requestTimers.put(command, series.timer(NodeMetric.REQUEST_DURATION, command));
    }
    applyTimer = series.timer(NodeMetric.APPLY_DURATION);
    batchCommands = series.histogram(NodeMetric.BATCH_COMMANDS);
    gauges = new NodeGauges(nodeId, series);
    followerGauges = new FollowerGauges(series);
    series.gauge(
        NodeMetric.STORAGE_WRITABLE,
        () -> storageFreeBytes == null ? null : storageProblem.get() == null ? 1L : 0L);
    series.gauge(
        NodeMetric.STORAGE_FREE_BYTES,
        () -> storageFreeBytes == null ? null : storageFreeBytes.getAsLong());
    series.gauge(
        NodeMetric.CLOCK_OFFSET,
        () -> {
          Long aheadMs = clockOffsetMs.get();
          return aheadMs == null ? null : aheadMs / 1000.0;
        });
    Properties build = buildProperties();
    series.gauge(
        NodeMetric.BUILD_INFO,
        () -> 1,
        build.getProperty("version", "unknown"),
        build.getProperty("ratis.version", "unknown"));
    prometheus.register(new PrometheusExport(registry, series, gauges::peers));
    JvmMetrics.builder().register(prometheus);
    // Last: from here on Ratis registries of this peer are mirrored, so build the RaftServer after
    // this.
    this.ratisMirror = RatisMetricsBridge.attach(nodeId, registry);
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

  /**
   * Where {@code /health} and the storage gauges learn whether the node can persist: {@code
   * problem} is null while it can, else why not; {@code freeBytes} the free space last measured.
   */
  public void watchStorage(Supplier<String> problem, LongSupplier freeBytes) {
    this.storageProblem = problem;
    this.storageFreeBytes = freeBytes;
  }

  /**
   * Exports the certificate-expiry gauge of {@code listener}: {@code notAfter} answers when the
   * certificate it presents to its next connection stops being valid (null: no sample). Called once
   * per listener, by what gives the listener its TLS.
   */
  public void watchCertificate(TlsListener listener, Supplier<Instant> notAfter) {
    series.gauge(
        NodeMetric.TLS_CERTIFICATE_EXPIRY,
        () -> {
          Instant until = notAfter.get();
          return until == null ? null : Duration.between(Instant.now(), until).toMillis() / 1000.0;
        },
        listener.label());
  }

  /**
   * {@code listener} refused a TLS handshake from {@code remote} (null if unknown) for {@code
   * cause}: counted by reason, and logged (rate-limited).
   */
  @Override
  public void tlsHandshakeRefused(TlsListener listener, SocketAddress remote, Throwable cause) {
    tlsRefusals.refused(listener, remote, cause);
  }

  /**
   * Where {@code fencekeeper_clock_offset_seconds} reads how far this node's wall clock is ahead of
   * the replicated time line, in milliseconds; {@code aheadMs} may answer null (no sample).
   */
  public void watchClockOffset(Supplier<Long> aheadMs) {
    this.clockOffsetMs = aheadMs;
  }

  /**
   * The leader's latest view of its followers, from its sampler ({@code FollowerWatch}): what the
   * per-follower gauges, {@code /health} and the node's self-description show. Empty on a node that
   * does not lead. {@code maxLag} is the bound the view's {@code lagging} was judged by ({@code
   * health.max-follower-lag}).
   */
  public void followersSampled(List<FollowerLag> view, Duration maxLag) {
    this.maxFollowerLag = maxLag;
    followerGauges.sampled(view);
  }

  @Override
  public List<FollowerLag> followers() {
    return followerGauges.latest();
  }

  /**
   * Gives the gauges their sources: the node's Raft division and its state machine; and {@code
   * /health} its bound: how many log entries the applied index may trail the leader's commit index
   * while the node reads as ready ({@code health.max-apply-lag}).
   */
  public void bind(
      RaftServer server, RaftGroupId groupId, StateReader stateMachine, int maxApplyLag) {
    readiness = new Readiness(maxApplyLag);
    gauges.bind(new NodeGauges.Binding(server, groupId, stateMachine));
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

  /** What {@code /metrics} serves: the registry as Prometheus families, and the JVM's metrics. */
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
   * Ready when this node knows a leader and has applied to within {@code health.max-apply-lag}
   * entries of the commit index that leader last sent it ({@link Readiness}). That commit index is
   * read first; a node that is behind it is given up to {@link #HEALTH_CATCH_UP_WAIT} to come
   * within the bound, so one that is merely mid-apply under load still reads as ready, while one
   * that is really behind (restarted after missing writes, on wiped storage, or cut off from the
   * leader) does not.
   */
  public Health health() {
    String storage = storageProblem.get();
    if (storage != null) {
      return new Health(false, "not ready: cannot persist: " + storage);
    }
    NodeGauges.Binding b = gauges.binding();
    if (b == null) {
      return new Health(false, "not ready: the Raft server has not started");
    }
    RaftServer.Division d = b.division().orElse(null);
    if (d == null || !d.getInfo().isAlive()) {
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
    Readiness readiness = this.readiness;
    // Read once: under load the leader's commit index moves on while this waits, and a node that
    // keeps up should not be chasing a target that moves with it.
    OptionalLong leaderCommit = leaderCommitIndex(d, leader);
    long deadline = System.nanoTime() + HEALTH_CATCH_UP_WAIT.toNanos();
    String behind;
    while ((behind =
                readiness.behind(
                    leader.toString(), leaderCommit, d.getInfo().getLastAppliedIndex()))
            != null
        && leaderCommit.isPresent()
        && System.nanoTime() < deadline) {
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    if (behind != null) {
      return new Health(false, "not ready: " + behind);
    }
    // Ready all the same: the leader still commits with the followers that keep up, and failing
    // its probe would take away the one node that serves.
    String degraded =
        d.getInfo().isLeader() ? Redundancy.degraded(followers(), maxFollowerLag) : null;
    return new Health(true, degraded == null ? "ready" : "ready; " + degraded);
  }

  /**
   * The leader's commit index as this node knows it: its own on the leader; on a follower, what the
   * leader's last append told it (Ratis keeps every member's commit index the leader reports).
   */
  private static OptionalLong leaderCommitIndex(RaftServer.Division d, RaftPeerId leader) {
    if (leader.equals(d.getId())) {
      return OptionalLong.of(d.getRaftLog().getLastCommittedIndex());
    }
    String leaderId = leader.toString();
    return d.getCommitInfos().stream()
        .filter(info -> info.getServer().getId().toStringUtf8().equals(leaderId))
        .mapToLong(CommitInfoProto::getCommitIndex)
        .findFirst();
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
      count(command, outcome);
      if (outcome.code() == Code.PERMISSION_DENIED) {
        deniedRequests.inc();
        if (requestContext instanceof RequestStart) {
          LOG.warn("{}: PERMISSION_DENIED {}: {}", nodeId, commandName(command), outcome.message());
        }
      }
      if (command instanceof Command.Write && outcome.code() == Code.ACCEPTED) {
        gauges.applied(outcome.facts());
      }
      if (requestContext instanceof RequestStart s) {
        long nanos = System.nanoTime() - s.nanos();
        requestTimers.get(commandName(command)).update(nanos, TimeUnit.NANOSECONDS);
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

  /**
   * The name each command is timed and logged under, one of {@link NodeMetric#COMMANDS}. A batch is
   * applied, and observed, command by command.
   */
  static final Map<Class<? extends Command>, String> COMMAND_NAMES =
      Map.of(
          Command.Acquire.class, "ACQUIRE",
          Command.Renew.class, "RENEW",
          Command.Release.class, "RELEASE",
          Command.Write.class, "WRITE",
          Command.Revoke.class, "REVOKE",
          Command.CancelWait.class, "CANCEL_WAIT",
          Command.RenewSession.class, "RENEW_SESSION",
          Command.Takeover.class, "TAKEOVER",
          Command.Tick.class, "TICK");

  static String commandName(Command command) {
    return command instanceof Command.Batch ? "BATCH" : COMMAND_NAMES.get(command.getClass());
  }
}
