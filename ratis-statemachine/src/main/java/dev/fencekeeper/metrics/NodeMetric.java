package dev.fencekeeper.metrics;

import dev.fencekeeper.core.Code;
import java.util.List;

/**
 * Every metric of fencekeeper's own that a node exports, declared once: its type, its Prometheus
 * family, its Dropwizard (JMX) name, its labels and its help. {@link NodeMetrics} registers each
 * series in the node's Dropwizard registry under {@link #dropwizardName}, and {@link
 * PrometheusExport} renders exactly these families from that registry; Ratis's own metrics are
 * converted by one rule instead ({@link RatisNames}). docs/operations.md lists every name.
 *
 * <p>A label is a segment of the Dropwizard name ({@code fencekeeper.writes.rejected.{reason}} is
 * {@code fencekeeper.writes.rejected.STALE_TOKEN} in JMX and {@code
 * fencekeeper_writes_rejected_total{reason="STALE_TOKEN"}} in Prometheus); a label that is no
 * segment (the build's version) is only in Prometheus.
 */
public enum NodeMetric {
  ACQUISITIONS_GRANTED(
      Type.COUNTER,
      "fencekeeper_acquisitions_granted_total",
      "fencekeeper.acquisitions.granted",
      "Leases granted, grants to queued waiters included"),
  ACQUISITIONS_HELD(
      Type.COUNTER,
      "fencekeeper_acquisitions_held_total",
      "fencekeeper.acquisitions.held",
      "Acquires refused because the resource is held or in lock-delay"),
  ACQUISITIONS_WAITED(
      Type.COUNTER,
      "fencekeeper_acquisitions_waited_total",
      "fencekeeper.acquisitions.waited",
      "Acquires queued behind the holder"),
  RENEWALS(Type.COUNTER, "fencekeeper_renewals_total", "fencekeeper.renewals", "Leases renewed"),
  RELEASES(
      Type.COUNTER, "fencekeeper_releases_total", "fencekeeper.releases", "Live leases released"),
  EXPIRIES(
      Type.COUNTER, "fencekeeper_expiries_total", "fencekeeper.expiries", "Leases that ran out"),
  REVOCATIONS(
      Type.COUNTER,
      "fencekeeper_revocations_total",
      "fencekeeper.revocations",
      "Leases ended by an operator's revoke"),
  WRITES_ACCEPTED(
      Type.COUNTER,
      "fencekeeper_writes_accepted_total",
      "fencekeeper.writes.accepted",
      "Fenced writes applied"),
  WRITES_DEDUPLICATED(
      Type.COUNTER,
      "fencekeeper_writes_deduplicated_total",
      "fencekeeper.writes.deduplicated",
      "Retried writes answered from their receipt"),
  WRITES_REJECTED(
      Type.COUNTER,
      "fencekeeper_writes_rejected_total",
      "fencekeeper.writes.rejected.{reason}",
      "Fenced writes refused, by result code",
      "reason"),
  REQUESTS_INVALID(
      Type.COUNTER,
      "fencekeeper_requests_invalid_total",
      "fencekeeper.requests.invalid",
      "Other commands refused as INVALID_ARGUMENT"),
  REQUESTS_DENIED(
      Type.COUNTER,
      "fencekeeper_requests_denied_total",
      "fencekeeper.requests.denied",
      "Requests refused as PERMISSION_DENIED"),
  REQUESTS_OVERLOADED(
      Type.COUNTER,
      "fencekeeper_requests_overloaded_total",
      "fencekeeper.requests.overloaded",
      "Requests refused as OVERLOADED, reads included"),
  READS_OVERLOADED(
      Type.COUNTER,
      "fencekeeper_reads_overloaded_total",
      "fencekeeper.reads.overloaded",
      "Reads refused as OVERLOADED"),
  LEADER_CHANGES(
      Type.COUNTER,
      "fencekeeper_raft_leader_changes_total",
      "fencekeeper.raft.leader.changes",
      "Times this node learned of a leader"),
  ELECTIONS_ON_LEADER_LOSS(
      Type.COUNTER,
      "fencekeeper_raft_elections_on_leader_loss_total",
      "fencekeeper.raft.elections.on-leader-loss",
      "Elections started at once because the leader's process was gone"),
  REQUEST_DURATION(
      Type.TIMER,
      "fencekeeper_request_duration_seconds",
      "fencekeeper.request.{type}.seconds",
      "On the leader, from the request reaching the state machine until its entry is applied",
      Buckets.REQUEST_SECONDS,
      "type"),
  APPLY_DURATION(
      Type.TIMER,
      "fencekeeper_apply_duration_seconds",
      "fencekeeper.apply.seconds",
      "Time inside the state machine's apply per command, on every replica",
      Buckets.APPLY_SECONDS),
  BATCH_COMMANDS(
      Type.HISTOGRAM,
      "fencekeeper_batch_commands",
      "fencekeeper.batch.commands",
      "Commands per batched log entry, on every replica",
      Buckets.BATCH_COMMANDS),
  LEASES_LIVE(
      Type.GAUGE,
      "fencekeeper_leases_live",
      "fencekeeper.leases.live",
      "Leases live at state-machine time"),
  WAITERS(
      Type.GAUGE,
      "fencekeeper_waiters",
      "fencekeeper.waiters",
      "Acquires queued, over all resources"),
  RESOURCES(Type.GAUGE, "fencekeeper_resources", "fencekeeper.resources", "Resource records held"),
  KEYS(Type.GAUGE, "fencekeeper_keys", "fencekeeper.keys", "Protected keys stored"),
  STORED_BYTES(
      Type.GAUGE, "fencekeeper_stored_bytes", "fencekeeper.stored.bytes", "Value bytes stored"),
  TERM(
      Type.GAUGE,
      "fencekeeper_raft_term",
      "fencekeeper.raft.term",
      "This node's current Raft term"),
  LEADER_KNOWN(
      Type.GAUGE,
      "fencekeeper_raft_leader_known",
      "fencekeeper.raft.leader.known",
      "1 if this node knows a leader, else 0"),
  LEADING(
      Type.GAUGE,
      "fencekeeper_raft_leading",
      "fencekeeper.raft.leading",
      "1 on the leader, else 0"),
  APPLIED_INDEX(
      Type.GAUGE,
      "fencekeeper_raft_applied_index",
      "fencekeeper.raft.applied.index",
      "Last log index this node applied"),
  COMMIT_INDEX(
      Type.GAUGE,
      "fencekeeper_raft_commit_index",
      "fencekeeper.raft.commit.index",
      "Commit index this node knows"),
  FOLLOWER_MATCH_INDEX(
      Type.GAUGE,
      "fencekeeper_follower_match_index",
      "fencekeeper.follower.{peer}.match.index",
      "On the leader, per follower: the last log index the leader knows the follower holds",
      "peer"),
  FOLLOWER_LAG_ENTRIES(
      Type.GAUGE,
      "fencekeeper_follower_lag_entries",
      "fencekeeper.follower.{peer}.lag.entries",
      "On the leader, per follower: log entries the follower does not hold yet",
      "peer"),
  FOLLOWER_LAG_SECONDS(
      Type.GAUGE,
      "fencekeeper_follower_lag_seconds",
      "fencekeeper.follower.{peer}.lag.seconds",
      "On the leader, per follower: how long it has been behind without its match index"
          + " advancing; 0 while it holds the leader's whole log",
      "peer"),
  FOLLOWER_LAGGING(
      Type.GAUGE,
      "fencekeeper_follower_lagging",
      "fencekeeper.follower.{peer}.lagging",
      "On the leader, per follower: 1 while its lag in time is past health.max-follower-lag,"
          + " else 0",
      "peer"),
  SNAPSHOT_INDEX(
      Type.GAUGE,
      "fencekeeper_snapshot_last_index",
      "fencekeeper.snapshot.index",
      "Log index of this node's newest snapshot"),
  SNAPSHOT_TIMESTAMP(
      Type.GAUGE,
      "fencekeeper_snapshot_last_timestamp_seconds",
      "fencekeeper.snapshot.timestamp.seconds",
      "When this node's newest snapshot was written or installed (Unix time)"),
  STORAGE_WRITABLE(
      Type.GAUGE,
      "fencekeeper_storage_writable",
      "fencekeeper.storage.writable",
      "1 while storage.dir has its free-space reserve, 0 once the node stopped for want of it"),
  STORAGE_FREE_BYTES(
      Type.GAUGE,
      "fencekeeper_storage_free_bytes",
      "fencekeeper.storage.free.bytes",
      "Free bytes in the file system of storage.dir"),
  CLOCK_OFFSET(
      Type.GAUGE,
      "fencekeeper_clock_offset_seconds",
      "fencekeeper.clock.offset.seconds",
      "How far this node's wall clock is ahead of the replicated time line (negative: behind)"),
  TLS_CERTIFICATE_EXPIRY(
      Type.GAUGE,
      "fencekeeper_tls_certificate_expiry_seconds",
      "fencekeeper.tls.{listener}.certificate.expiry.seconds",
      "Per TLS listener: seconds until the certificate it presents to new connections expires;"
          + " negative once it has",
      "listener"),
  TLS_HANDSHAKES_REFUSED(
      Type.COUNTER,
      "fencekeeper_tls_handshakes_refused_total",
      "fencekeeper.tls.{listener}.handshakes.refused.{reason}",
      "Per TLS listener: handshakes that failed, by reason: refused by this node (expired,"
          + " untrusted, no_certificate, not_tls, other) or given up by the remote end"
          + " (abandoned); nothing reached the service",
      "listener",
      "reason"),
  BUILD_INFO(
      Type.INFO,
      "fencekeeper_build_info",
      "fencekeeper.build.info",
      "The fencekeeper build this node runs",
      "version",
      "ratis_version");

  /** How a metric is kept in Dropwizard and rendered in Prometheus. */
  public enum Type {
    /** A Dropwizard counter; a Prometheus counter (its family ends in {@code _total}). */
    COUNTER,
    /** A Dropwizard gauge of a number (no value: no sample); a Prometheus gauge. */
    GAUGE,
    /** A Dropwizard timer with cumulative buckets; a Prometheus histogram in seconds. */
    TIMER,
    /** A Dropwizard histogram with cumulative buckets; a Prometheus histogram. */
    HISTOGRAM,
    /** A Dropwizard gauge of 1 whose labels say what it describes; a Prometheus gauge. */
    INFO
  }

  /** The write rejections counted by reason: the values of {@link #WRITES_REJECTED}'s label. */
  public static final List<Code> REJECTION_REASONS =
      List.of(Code.STALE_TOKEN, Code.LEASE_EXPIRED, Code.UNKNOWN_TOKEN, Code.INVALID_ARGUMENT);

  /** The commands whose request latency is timed: the values of {@link #REQUEST_DURATION}'s. */
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

  private final Type type;
  private final String prometheusName;
  private final String dropwizardName;
  private final String help;
  private final double[] buckets;
  private final List<String> labelNames;

  NodeMetric(Type type, String prometheusName, String dropwizardName, String help) {
    this(type, prometheusName, dropwizardName, help, null, new String[0]);
  }

  NodeMetric(
      Type type, String prometheusName, String dropwizardName, String help, String... labels) {
    this(type, prometheusName, dropwizardName, help, null, labels);
  }

  NodeMetric(
      Type type,
      String prometheusName,
      String dropwizardName,
      String help,
      double[] buckets,
      String... labelNames) {
    this.type = type;
    this.prometheusName = prometheusName;
    this.dropwizardName = dropwizardName;
    this.help = help;
    this.buckets = buckets;
    this.labelNames = List.of(labelNames);
  }

  public Type type() {
    return type;
  }

  /**
   * The family's name as the Prometheus text format shows it: a counter's ends in {@code _total}, a
   * histogram's samples add {@code _bucket}, {@code _sum} and {@code _count} to it.
   */
  public String prometheusName() {
    return prometheusName;
  }

  /** The Dropwizard name with its label segments as {@code {label}} placeholders. */
  public String dropwizardPattern() {
    return dropwizardName;
  }

  /** The Dropwizard name of an unlabelled metric, or of the one series of an info metric. */
  public String dropwizardName() {
    return dropwizardName(List.of());
  }

  /** The Dropwizard name of the series with these label values, in {@link #labelNames} order. */
  public String dropwizardName(List<String> labelValues) {
    String name = dropwizardName;
    for (int i = 0; i < labelValues.size() && i < labelNames.size(); i++) {
      name = name.replace("{" + labelNames.get(i) + "}", labelValues.get(i));
    }
    if (name.indexOf('{') >= 0) {
      throw new IllegalArgumentException(this + " needs values for " + labelNames);
    }
    return name;
  }

  public String help() {
    return help;
  }

  public List<String> labelNames() {
    return labelNames;
  }

  /** A histogram's upper bucket bounds (seconds for a timer), ascending; empty for the rest. */
  public double[] buckets() {
    return buckets == null ? new double[0] : buckets.clone();
  }

  /** Bucket bounds: where each histogram's resolution is. */
  private static final class Buckets {
    /** Sub-millisecond applies up to multi-second stalls. */
    static final double[] REQUEST_SECONDS = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
    };

    /** One command's apply is microseconds unless something is wrong. */
    static final double[] APPLY_SECONDS = {
      0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.01, 0.1
    };

    static final double[] BATCH_COMMANDS = {2, 4, 8, 16, 32, 64, 128, 256};

    private Buckets() {}
  }
}
