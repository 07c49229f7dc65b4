package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.testing.TestCluster;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
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
 * leader's {@code /metrics} (parsed Prometheus text), its JMX beans, and the Ratis metrics beside them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class MetricsClusterTest {
  @TempDir static Path dataDir;

  /** A counter as Dropwizard/JMX names it and as Prometheus renders it, with the count the workload makes. */
  private record Expected(String dropwizardName, String prometheusSeries, long count) {}

  /** What the workload below does, as the leader must count it. */
  private static final List<Expected> EXPECTED = List.of(
      new Expected("fencekeeper.acquisitions.granted", "fencekeeper_acquisitions_granted_total", 7),
      new Expected("fencekeeper.acquisitions.held", "fencekeeper_acquisitions_held_total", 1),
      new Expected("fencekeeper.acquisitions.waited", "fencekeeper_acquisitions_waited_total", 0),
      new Expected("fencekeeper.renewals", "fencekeeper_renewals_total", 1),
      new Expected("fencekeeper.releases", "fencekeeper_releases_total", 1),
      new Expected("fencekeeper.expiries", "fencekeeper_expiries_total", 2),
      new Expected("fencekeeper.revocations", "fencekeeper_revocations_total", 1),
      new Expected("fencekeeper.writes.accepted", "fencekeeper_writes_accepted_total", 2),
      new Expected("fencekeeper.writes.deduplicated", "fencekeeper_writes_deduplicated_total", 0),
      new Expected("fencekeeper.writes.rejected.STALE_TOKEN", "fencekeeper_writes_rejected_STALE_TOKEN_total", 3),
      new Expected("fencekeeper.writes.rejected.LEASE_EXPIRED", "fencekeeper_writes_rejected_LEASE_EXPIRED_total", 1),
      new Expected("fencekeeper.writes.rejected.UNKNOWN_TOKEN", "fencekeeper_writes_rejected_UNKNOWN_TOKEN_total", 1),
      new Expected("fencekeeper.writes.rejected.INVALID_ARGUMENT",
          "fencekeeper_writes_rejected_INVALID_ARGUMENT_total", 1),
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
    assertThat(client.write("report", b.token(), "2026-11-29", bytes("hello")).isAccepted()).isTrue();
    assertThat(client.write("report", b.token(), "2026-11-30", bytes("world!")).isAccepted()).isTrue();
    assertThat(client.renew("report", b.token(), null).code()).isEqualTo(ResultCode.RENEWED);

    // Grant 3, expiry 2, and a write with the ended lease that nobody superseded: LEASE_EXPIRED.
    Result c = client.acquireToken("cache", Duration.ofMillis(300), "worker-c");
    assertThat(c.code()).isEqualTo(ResultCode.GRANTED);
    awaitCounter("fencekeeper_expiries_total", 2);
    assertThat(client.write("cache", c.token(), "k", late).isExpired()).isTrue();

    // A token never issued, and a malformed write (empty key).
    WriteResult unknown = client.write("report", b.token() + 1_000_000, "k", late);
    assertThat(unknown.code()).isEqualTo(ResultCode.UNKNOWN_TOKEN);
    assertThat(client.write("report", b.token(), "", late).code()).isEqualTo(ResultCode.INVALID_ARGUMENT);

    // Grants 4-7; one refused acquire (HELD); one release; one revoke (operator eviction).
    Result[] q = new Result[4];
    for (int i = 0; i < 4; i++) {
      q[i] = client.acquireToken("queue-" + i, Duration.ofSeconds(30), "worker-q" + i);
      assertThat(q[i].code()).isEqualTo(ResultCode.GRANTED);
    }
    assertThat(client.acquireToken("queue-1", Duration.ofSeconds(30), "intruder").code()).isEqualTo(ResultCode.HELD);
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
    await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50))
        .until(() -> Scrape.value(Scrape.metrics(cluster.metricsPort(leader)), series).orElse(-1) >= value);
  }

  // Guarantee: the leader's /metrics, parsed as Prometheus text, shows exactly the scripted counts —
  // 7 grants, 3 stale writes, 2 expiries, 1 revocation — and every other counter as scripted.
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
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      Map<String, Double> s = Scrape.metrics(cluster.metricsPort(leader));
      assertThat(s).containsEntry("fencekeeper_leases_live", 3.0)
          .containsEntry("fencekeeper_waiters", 0.0)
          .containsEntry("fencekeeper_keys", 2.0)
          .containsEntry("fencekeeper_stored_bytes", 11.0)
          .containsEntry("fencekeeper_raft_leader_known", 1.0)
          .containsEntry("fencekeeper_raft_leading", 1.0);
      assertThat(s.get("fencekeeper_raft_term")).isPositive();
      assertThat(s.get("fencekeeper_raft_applied_index")).isEqualTo(s.get("fencekeeper_raft_commit_index"));
    });
    // Requests the leader logged are timed per command: 8 acquires (7 granted, 1 held); 4 writes (2
    // accepted, LEASE_EXPIRED, UNKNOWN_TOKEN — the 4 refused without a log entry are not timed); 1 renew;
    // 1 revoke. At least: a client retry after a lost reply would be timed again.
    Map<String, Double> s = Scrape.metrics(cluster.metricsPort(leader));
    assertThat(s.get("fencekeeper_request_ACQUIRE_seconds_count")).isGreaterThanOrEqualTo(8.0);
    assertThat(s.get("fencekeeper_request_WRITE_seconds_count")).isGreaterThanOrEqualTo(4.0);
    assertThat(s.get("fencekeeper_request_RENEW_seconds_count")).isGreaterThanOrEqualTo(1.0);
    assertThat(s.get("fencekeeper_request_REVOKE_seconds_count")).isGreaterThanOrEqualTo(1.0);
    assertThat(s.get("fencekeeper_apply_seconds_count")).isGreaterThanOrEqualTo(16.0);
    assertThat(s).containsKey("fencekeeper_apply_seconds{quantile=\"0.99\"}");
  }

  // Guarantee: followers count the same applied outcomes as the leader (lease events and rejections
  // decided in apply), but not the refusals only the leader answered.
  @Test
  void followersCountAppliedOutcomesToo() {
    String follower = cluster.running().keySet().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      Map<String, Double> s = Scrape.metrics(cluster.metricsPort(follower));
      assertThat(s).containsEntry("fencekeeper_acquisitions_granted_total", 7.0)
          .containsEntry("fencekeeper_expiries_total", 2.0)
          .containsEntry("fencekeeper_revocations_total", 1.0)
          .containsEntry("fencekeeper_writes_rejected_UNKNOWN_TOKEN_total", 1.0)
          .containsEntry("fencekeeper_writes_rejected_STALE_TOKEN_total", 0.0) // refused on the leader
          .containsEntry("fencekeeper_raft_leading", 0.0);
    });
  }

  // Guarantee: JMX shows the same metrics as beans in the node's domain fencekeeper.<nodeId>, with the
  // same values as /metrics.
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
    assertThat(names).contains("fencekeeper.apply.seconds", "fencekeeper.request.WRITE.seconds",
        "fencekeeper.leases.live", "fencekeeper.stored.bytes", "fencekeeper.raft.commit.index");
    ObjectName live = new ObjectName(domain + ":name=fencekeeper.leases.live,type=gauges");
    await().atMost(Duration.ofSeconds(10)).until(() -> Long.valueOf(3).equals(jmx.getAttribute(live, "Value")));
    // Ratis's own metrics are beans of the same node, beside ours.
    assertThat(names).anyMatch(n -> n.startsWith("ratis.server."));
  }

  // Guarantee: Ratis's own metrics appear in each node's /metrics beside fencekeeper's, and each node
  // shows its own (not another in-process node's) values.
  @Test
  void ratisMetricsAppearPerNode() {
    for (String id : cluster.running().keySet()) {
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        Map<String, Double> s = Scrape.metrics(cluster.metricsPort(id));
        assertThat(s.keySet()).anyMatch(k -> k.startsWith("ratis_server_"))
            .anyMatch(k -> k.startsWith("ratis_log_worker_"))
            .anyMatch(k -> k.startsWith("ratis_leader_election_"));
        // Ratis's applied index of this node, and fencekeeper's view of the same division, agree.
        assertThat(s.get("ratis_state_machine_appliedIndex")).isEqualTo(s.get("fencekeeper_raft_applied_index"));
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
}
