package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.testing.TestCluster;
import io.prometheus.metrics.expositionformats.generated.com_google_protobuf_4_36_2.Metrics;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A scripted workload with known counts against three in-process nodes, then read back from the
 * leader's {@code /metrics} (parsed Prometheus text), its JMX beans, and the Ratis metrics beside
 * them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class MetricsClusterTest {
  @TempDir static Path dataDir;
  @TempDir static Path scratch;

  /**
   * A counter as Dropwizard/JMX names it and as Prometheus renders it, with the count the workload
   * makes.
   */
  private record Expected(String dropwizardName, String prometheusSeries, long count) {}

  /** What the workload below does, as the leader must count it. */
  private static final List<Expected> EXPECTED =
      List.of(
          new Expected(
              "fencekeeper.acquisitions.granted", "fencekeeper_acquisitions_granted_total", 7),
          new Expected("fencekeeper.acquisitions.held", "fencekeeper_acquisitions_held_total", 1),
          new Expected(
              "fencekeeper.acquisitions.waited", "fencekeeper_acquisitions_waited_total", 0),
          new Expected("fencekeeper.renewals", "fencekeeper_renewals_total", 1),
          new Expected("fencekeeper.releases", "fencekeeper_releases_total", 1),
          new Expected("fencekeeper.expiries", "fencekeeper_expiries_total", 2),
          new Expected("fencekeeper.revocations", "fencekeeper_revocations_total", 1),
          new Expected("fencekeeper.writes.accepted", "fencekeeper_writes_accepted_total", 2),
          new Expected(
              "fencekeeper.writes.deduplicated", "fencekeeper_writes_deduplicated_total", 0),
          new Expected(
              "fencekeeper.writes.rejected.STALE_TOKEN",
              "fencekeeper_writes_rejected_total{reason=\"STALE_TOKEN\"}",
              3),
          new Expected(
              "fencekeeper.writes.rejected.LEASE_EXPIRED",
              "fencekeeper_writes_rejected_total{reason=\"LEASE_EXPIRED\"}",
              1),
          new Expected(
              "fencekeeper.writes.rejected.UNKNOWN_TOKEN",
              "fencekeeper_writes_rejected_total{reason=\"UNKNOWN_TOKEN\"}",
              1),
          new Expected(
              "fencekeeper.writes.rejected.INVALID_ARGUMENT",
              "fencekeeper_writes_rejected_total{reason=\"INVALID_ARGUMENT\"}",
              1),
          new Expected("fencekeeper.requests.invalid", "fencekeeper_requests_invalid_total", 0));

  private TestCluster cluster;
  private String leader;

  @BeforeAll
  void runWorkload() {
    Properties p = new Properties();
    // Generous election timeouts: the counts below are the leader's, so leadership must not move.
    p.setProperty("raft.election.timeout.min", "1s");
    p.setProperty("raft.election.timeout.max", "2s");
    cluster = TestCluster.startWithMetrics(dataDir, p);
    leader = cluster.awaitLeader();
    FencingClient client = cluster.newClient("metrics-test");
    byte[] late = bytes("late");

    // Grant 1, then expiry 1: worker A's lease runs out while it is "paused".
    Result a = client.acquireToken("report", Duration.ofMillis(300), "worker-a");
    assertThat(a.code()).isEqualTo(ResultCode.GRANTED);
    awaitCounter("fencekeeper_expiries_total", 1);
    // Grant 2: worker B takes over; A wakes up and writes three times with its stale token.
    Result b = client.acquireToken("report", Duration.ofSeconds(30), "worker-b");
    assertThat(b.code()).isEqualTo(ResultCode.GRANTED);
    for (int i = 0; i < 3; i++) {
      assertThat(client.write("report", a.token(), "2026-11-29", late).isStale()).isTrue();
    }
    assertThat(client.write("report", b.token(), "2026-11-29", bytes("hello")).isAccepted())
        .isTrue();
    assertThat(client.write("report", b.token(), "2026-11-30", bytes("world!")).isAccepted())
        .isTrue();
    assertThat(client.renew("report", b.token(), null).code()).isEqualTo(ResultCode.RENEWED);

    // Grant 3, expiry 2, and a write with the ended lease that nobody superseded: LEASE_EXPIRED.
    Result c = client.acquireToken("cache", Duration.ofMillis(300), "worker-c");
    assertThat(c.code()).isEqualTo(ResultCode.GRANTED);
    awaitCounter("fencekeeper_expiries_total", 2);
    assertThat(client.write("cache", c.token(), "k", late).isExpired()).isTrue();

    // A token never issued, and a malformed write (empty key).
    WriteResult unknown = client.write("report", b.token() + 1_000_000, "k", late);
    assertThat(unknown.code()).isEqualTo(ResultCode.UNKNOWN_TOKEN);
    assertThat(client.write("report", b.token(), "", late).code())
        .isEqualTo(ResultCode.INVALID_ARGUMENT);

    // Grants 4-7; one refused acquire (HELD); one release; one revoke (operator eviction).
    Result[] q = new Result[4];
    for (int i = 0; i < 4; i++) {
      q[i] = client.acquireToken("queue-" + i, Duration.ofSeconds(30), "worker-q" + i);
      assertThat(q[i].code()).isEqualTo(ResultCode.GRANTED);
    }
    assertThat(client.acquireToken("queue-1", Duration.ofSeconds(30), "intruder").code())
        .isEqualTo(ResultCode.HELD);
    assertThat(client.release("queue-2", q[2].token()).code()).isEqualTo(ResultCode.RELEASED);
    assertThat(client.revoke("queue-3", "metrics drill").code()).isEqualTo(ResultCode.REVOKED);

    // Every count above is final once the leader has applied the revoke.
    awaitCounter("fencekeeper_revocations_total", 1);
    assertThat(cluster.awaitLeader()).as("leadership moved during the workload").isEqualTo(leader);
  }

  @AfterAll
  void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private void awaitCounter(String series, long value) {
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () ->
                Scrape.value(Scrape.metrics(cluster.metricsPort(leader)), series).orElse(-1)
                    >= value);
  }

  // Guarantee: the leader's /metrics, parsed as Prometheus text, shows exactly the scripted counts
  // — 7 grants, 3 stale writes, 2 expiries, 1 revocation — and every other counter as scripted.
  @Test
  void prometheusTextShowsTheScriptedCounts() {
    Map<String, Double> samples = Scrape.metrics(cluster.metricsPort(leader));
    Map<String, Double> expected = new LinkedHashMap<>();
    Map<String, Double> actual = new LinkedHashMap<>();
    for (Expected e : EXPECTED) {
      expected.put(e.prometheusSeries(), (double) e.count());
      actual.put(e.prometheusSeries(), samples.get(e.prometheusSeries()));
    }
    assertThat(actual).isEqualTo(expected);
  }

  // Guarantee: the gauges describe the state the workload left: 3 live leases (report, queue-0,
  // queue-1), no waiters, 2 keys holding 11 value bytes, and a leader that knows itself.
  @Test
  void gaugesDescribeTheAppliedState() {
    // The census behind leases and waiters is cached for up to 500 ms.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              Map<String, Double> s = Scrape.metrics(cluster.metricsPort(leader));
              assertThat(s)
                  .containsEntry("fencekeeper_leases_live", 3.0)
                  .containsEntry("fencekeeper_waiters", 0.0)
                  .containsEntry("fencekeeper_keys", 2.0)
                  .containsEntry("fencekeeper_stored_bytes", 11.0)
                  .containsEntry("fencekeeper_raft_leader_known", 1.0)
                  .containsEntry("fencekeeper_raft_leading", 1.0);
              assertThat(s.get("fencekeeper_raft_term")).isPositive();
              assertThat(s.get("fencekeeper_raft_applied_index"))
                  .isEqualTo(s.get("fencekeeper_raft_commit_index"));
            });
    // Requests the leader logged are timed per command: 8 acquires (7 granted, 1 held); 8 writes (3
    // STALE_TOKEN, 2 accepted, LEASE_EXPIRED, UNKNOWN_TOKEN, INVALID_ARGUMENT: every write is
    // logged); 1 renew; 1 revoke. At least: a client retry after a lost reply would be timed again.
    Map<String, Double> s = Scrape.metrics(cluster.metricsPort(leader));
    assertThat(s.get("fencekeeper_request_duration_seconds_count{type=\"ACQUIRE\"}"))
        .isGreaterThanOrEqualTo(8.0);
    assertThat(s.get("fencekeeper_request_duration_seconds_count{type=\"WRITE\"}"))
        .isGreaterThanOrEqualTo(8.0);
    assertThat(s.get("fencekeeper_request_duration_seconds_count{type=\"RENEW\"}"))
        .isGreaterThanOrEqualTo(1.0);
    assertThat(s.get("fencekeeper_request_duration_seconds_count{type=\"REVOKE\"}"))
        .isGreaterThanOrEqualTo(1.0);
    assertThat(s.get("fencekeeper_apply_duration_seconds_count")).isGreaterThanOrEqualTo(16.0);
    assertThat(s).containsKey("fencekeeper_apply_duration_seconds_bucket{le=\"+Inf\"}");
  }

  // Guarantee: followers count the same applied outcomes as the leader: lease events and every
  // rejected write, stale and malformed ones included, since all are decided in apply.
  @Test
  void followersCountAppliedOutcomesToo() {
    String follower =
        cluster.running().keySet().stream()
            .filter(id -> !id.equals(leader))
            .findFirst()
            .orElseThrow();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              Map<String, Double> s = Scrape.metrics(cluster.metricsPort(follower));
              assertThat(s)
                  .containsEntry("fencekeeper_acquisitions_granted_total", 7.0)
                  .containsEntry("fencekeeper_expiries_total", 2.0)
                  .containsEntry("fencekeeper_revocations_total", 1.0)
                  .containsEntry("fencekeeper_writes_rejected_total{reason=\"UNKNOWN_TOKEN\"}", 1.0)
                  .containsEntry("fencekeeper_writes_rejected_total{reason=\"STALE_TOKEN\"}", 3.0)
                  .containsEntry(
                      "fencekeeper_writes_rejected_total{reason=\"INVALID_ARGUMENT\"}", 1.0)
                  .containsEntry("fencekeeper_raft_leading", 0.0);
            });
  }

  // Guarantee: JMX shows the same metrics as beans in the node's domain fencekeeper.<nodeId>, with
  // the same values as /metrics.
  @Test
  void jmxShowsTheSameBeans() throws Exception {
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    String domain = "fencekeeper." + leader;
    Set<String> names = new TreeSet<>();
    for (ObjectName n : jmx.queryNames(new ObjectName(domain + ":*"), null)) {
      names.add(n.getKeyProperty("name"));
    }
    for (Expected e : EXPECTED) {
      assertThat(names).contains(e.dropwizardName());
      ObjectName bean = new ObjectName(domain + ":name=" + e.dropwizardName() + ",type=counters");
      assertThat(jmx.getAttribute(bean, "Count")).as(e.dropwizardName()).isEqualTo(e.count());
    }
    assertThat(names)
        .contains(
            "fencekeeper.apply.seconds",
            "fencekeeper.request.WRITE.seconds",
            "fencekeeper.leases.live",
            "fencekeeper.stored.bytes",
            "fencekeeper.raft.commit.index");
    ObjectName live = new ObjectName(domain + ":name=fencekeeper.leases.live,type=gauges");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> Long.valueOf(3).equals(jmx.getAttribute(live, "Value")));
    // Ratis's own metrics are beans of the same node, beside ours.
    assertThat(names).anyMatch(n -> n.startsWith("ratis.server."));
  }

  // Guarantee: Ratis's own metrics appear in each node's /metrics beside fencekeeper's, and each
  // node shows its own (not another in-process node's) values.
  @Test
  void ratisMetricsAppearPerNode() {
    for (String id : cluster.running().keySet()) {
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                Map<String, Double> s = Scrape.metrics(cluster.metricsPort(id));
                assertThat(s.keySet())
                    .anyMatch(k -> k.startsWith("ratis_server_"))
                    .anyMatch(k -> k.startsWith("ratis_log_worker_"))
                    .anyMatch(k -> k.startsWith("ratis_leader_election_"));
                // Ratis's applied index of this node, and fencekeeper's view of the same division,
                // agree.
                assertThat(s.get("ratis_state_machine_applied_index"))
                    .isEqualTo(s.get("fencekeeper_raft_applied_index"));
              });
    }
    // Only the leader runs log appenders; their metrics are the leader's alone.
    assertThat(Scrape.metrics(cluster.metricsPort(leader)).keySet())
        .anyMatch(k -> k.startsWith("ratis_log_appender_follower_"));
    for (String id : cluster.running().keySet()) {
      if (!id.equals(leader)) {
        assertThat(Scrape.metrics(cluster.metricsPort(id)).keySet())
            .noneMatch(k -> k.startsWith("ratis_log_appender_follower_"));
      }
    }
  }

  // Guarantee: /metrics follows Prometheus's conventions, as read by the client library's own
  // parser of its protobuf exposition (the format Prometheus itself negotiates first): labelled
  // families for reasons and request types, histograms in seconds, build info, JVM metrics and
  // Ratis's metrics in snake case; and the text format declares each of those families with the
  // same type.
  @Test
  void expositionFollowsPrometheusConventions() {
    Map<String, Metrics.MetricFamily> families = Scrape.families(cluster.metricsPort(leader));

    Metrics.MetricFamily rejected = families.get("fencekeeper_writes_rejected_total");
    assertThat(rejected)
        .as("fencekeeper_writes_rejected_total in %s", families.keySet())
        .isNotNull();
    assertThat(rejected.getType()).isEqualTo(Metrics.MetricType.COUNTER);
    assertThat(rejected.getMetricList())
        .extracting(m -> labels(m).get("reason"))
        .containsExactlyInAnyOrder(
            "STALE_TOKEN", "LEASE_EXPIRED", "UNKNOWN_TOKEN", "INVALID_ARGUMENT");
    assertThat(rejected.getMetricList())
        .filteredOn(m -> "STALE_TOKEN".equals(labels(m).get("reason")))
        .singleElement()
        .satisfies(m -> assertThat(m.getCounter().getValue()).isEqualTo(3.0));

    Metrics.MetricFamily requests = families.get("fencekeeper_request_duration_seconds");
    assertThat(requests.getType()).isEqualTo(Metrics.MetricType.HISTOGRAM);
    assertThat(requests.getMetricList())
        .extracting(m -> labels(m).get("type"))
        .containsExactlyInAnyOrderElementsOf(NodeMetric.COMMANDS);
    Metrics.Metric writes =
        requests.getMetricList().stream()
            .filter(m -> "WRITE".equals(labels(m).get("type")))
            .findFirst()
            .orElseThrow();
    assertThat(writes.getHistogram().getSampleCount()).isGreaterThanOrEqualTo(4);
    assertThat(writes.getHistogram().getSampleSum()).isPositive();
    assertThat(writes.getHistogram().getBucketList())
        .isNotEmpty()
        .allSatisfy(
            b ->
                assertThat(b.getCumulativeCount())
                    .isLessThanOrEqualTo(writes.getHistogram().getSampleCount()));
    assertThat(families.get("fencekeeper_apply_duration_seconds").getType())
        .isEqualTo(Metrics.MetricType.HISTOGRAM);
    assertThat(families.get("fencekeeper_batch_commands").getType())
        .isEqualTo(Metrics.MetricType.HISTOGRAM);

    Metrics.MetricFamily build = families.get("fencekeeper_build_info");
    assertThat(build.getType()).isEqualTo(Metrics.MetricType.GAUGE);
    assertThat(labels(build.getMetric(0))).containsKeys("version", "ratis_version");
    assertThat(labels(build.getMetric(0)).get("version")).isNotBlank().isNotEqualTo("unknown");

    assertThat(families.get("fencekeeper_raft_leading").getType())
        .isEqualTo(Metrics.MetricType.GAUGE);
    assertThat(families.get("fencekeeper_expiries_total").getType())
        .isEqualTo(Metrics.MetricType.COUNTER);
    assertThat(families)
        .containsKeys("jvm_memory_used_bytes", "jvm_threads_current", "jvm_gc_collection_seconds");
    assertThat(families.keySet())
        .filteredOn(n -> n.startsWith("ratis_"))
        .isNotEmpty()
        .allMatch(n -> n.matches("[a-z0-9_]+"), "snake case");
    assertThat(families.get("ratis_state_machine_applied_index").getType())
        .isEqualTo(Metrics.MetricType.GAUGE);

    String text = Scrape.get(cluster.metricsPort(leader), "/metrics").body();
    assertThat(text)
        .contains(
            "# TYPE fencekeeper_writes_rejected_total counter\n",
            "# TYPE fencekeeper_request_duration_seconds histogram\n",
            "fencekeeper_request_duration_seconds_bucket{type=\"WRITE\",le=\"+Inf\"} ",
            "fencekeeper_request_duration_seconds_sum{type=\"WRITE\"} ",
            "# TYPE fencekeeper_build_info gauge\n");
  }

  private static Map<String, String> labels(Metrics.Metric m) {
    Map<String, String> labels = new LinkedHashMap<>();
    m.getLabelList().forEach(l -> labels.put(l.getName(), l.getValue()));
    return labels;
  }

  // Guarantee: every fencekeeper or Ratis metric that the shipped dashboard and alerting rules
  // query is one a node exposes (after a snapshot, so the snapshot gauges exist too), so neither
  // watches a dead name.
  @Test
  void dashboardAndAlertsQueryExposedMetrics() throws Exception {
    try (FencingAdmin admin = FencingAdmin.connect(cluster.config())) {
      admin.snapshot(leader, Duration.ofSeconds(30));
    }
    Set<String> exposed = new TreeSet<>();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              Map<String, Metrics.MetricFamily> families =
                  Scrape.families(cluster.metricsPort(leader));
              assertThat(families)
                  .containsKeys(
                      "fencekeeper_snapshot_last_index",
                      "fencekeeper_snapshot_last_timestamp_seconds");
              for (Metrics.MetricFamily f : families.values()) {
                exposed.add(f.getName());
                if (f.getType() == Metrics.MetricType.HISTOGRAM
                    || f.getType() == Metrics.MetricType.SUMMARY) {
                  exposed.addAll(
                      List.of(
                          f.getName() + "_bucket", f.getName() + "_sum", f.getName() + "_count"));
                }
              }
            });
    // A node exports its certificate's expiry only with TLS, which this cluster runs without.
    exposed.add(NodeMetric.TLS_CERTIFICATE_EXPIRY.prometheusName());
    Pattern name = Pattern.compile("\\b((?:fencekeeper|ratis|jvm)_[a-z0-9_]+)");
    for (Path doc :
        List.of(
            Path.of("../docs/grafana-dashboard.json"), Path.of("../docs/prometheus-alerts.yml"))) {
      Set<String> queried = new TreeSet<>();
      Matcher m = name.matcher(Files.readString(doc));
      while (m.find()) {
        queried.add(m.group(1));
      }
      assertThat(queried).as(doc.toString()).isNotEmpty();
      assertThat(exposed).as("metrics %s queries", doc).containsAll(queried);
    }
    Optional<Path> promtool = PromLint.promtool();
    if (promtool.isPresent()) {
      Process check =
          new ProcessBuilder(
                  promtool.get().toString(), "check", "rules", "../docs/prometheus-alerts.yml")
              .redirectErrorStream(true)
              .start();
      String out = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(check.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      assertThat(check.exitValue()).as(out).isZero();
    }
  }

  // Guarantee: a node's /metrics after traffic passes `promtool check metrics` (run when promtool
  // is
  // installed) and the same checks in Java (always): every family declared once with help and type,
  // valid histograms and summaries, counters and only counters ending in _total, no _count, _sum or
  // _bucket on a gauge, snake case, base units.
  @Test
  void expositionPassesPromtoolChecksAfterTraffic() throws Exception {
    String follower =
        cluster.running().keySet().stream()
            .filter(id -> !id.equals(leader))
            .findFirst()
            .orElseThrow();
    for (String id : List.of(leader, follower)) {
      String text = Scrape.get(cluster.metricsPort(id), "/metrics").body();
      assertThat(PromLint.check(text)).as("Java checks of %s's /metrics", id).isEmpty();
      Optional<Path> promtool = PromLint.promtool();
      if (promtool.isPresent()) {
        Map.Entry<Integer, String> run = PromLint.promtool(promtool.get(), text, scratch);
        assertThat(run.getValue()).as("promtool on %s's /metrics", id).isBlank();
        assertThat(run.getKey()).as("promtool's exit code on %s", id).isZero();
      }
    }
  }

  // Guarantee: Ratis's per-peer metrics carry the peer as a label, not in the family's name: the
  // leader shows one follower_match_index series per follower, and no family names a peer.
  @Test
  void peerIdsAreLabelsNotNames() {
    Set<String> followers = new TreeSet<>(cluster.running().keySet());
    followers.remove(leader);
    Map<String, Metrics.MetricFamily> families = Scrape.families(cluster.metricsPort(leader));
    Metrics.MetricFamily match = families.get("ratis_log_appender_follower_match_index");
    assertThat(match).as("in %s", families.keySet()).isNotNull();
    assertThat(match.getMetricList())
        .extracting(m -> labels(m).get("peer"))
        .containsExactlyInAnyOrderElementsOf(followers);
    Metrics.MetricFamily responded =
        families.get("ratis_log_appender_follower_rpc_response_time_seconds");
    assertThat(responded.getType()).isEqualTo(Metrics.MetricType.GAUGE);
    assertThat(responded.getMetricList())
        .allSatisfy(m -> assertThat(m.getGauge().getValue()).isBetween(0.0, 60.0));
    for (String id : cluster.running().keySet()) {
      assertThat(families.keySet())
          .noneMatch(n -> n.contains("_" + id + "_") || n.endsWith("_" + id));
    }
  }

  // Guarantee: every gauge of the metric table is in /metrics (the TLS certificate's only with
  // TLS), the storage gauges among them: the node has room, and says how much.
  @Test
  void everyDeclaredMetricIsExposed() {
    Map<String, Metrics.MetricFamily> families = Scrape.families(cluster.metricsPort(leader));
    for (NodeMetric m : NodeMetric.values()) {
      if (m == NodeMetric.TLS_CERTIFICATE_EXPIRY
          || m == NodeMetric.SNAPSHOT_INDEX
          || m == NodeMetric.SNAPSHOT_TIMESTAMP) {
        continue; // no TLS here; the snapshot gauges are checked after a snapshot, below
      }
      assertThat(families).as("%s", m).containsKey(m.prometheusName());
    }
    assertThat(families.get("fencekeeper_storage_writable").getMetric(0).getGauge().getValue())
        .isEqualTo(1.0);
    assertThat(families.get("fencekeeper_storage_free_bytes").getMetric(0).getGauge().getValue())
        .isGreaterThan(64.0 * 1024 * 1024);
  }
}
