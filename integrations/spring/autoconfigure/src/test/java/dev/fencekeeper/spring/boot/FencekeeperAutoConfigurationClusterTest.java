package dev.fencekeeper.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.jdbc.JdbcFence;
import dev.fencekeeper.jdbc.StaleFenceTokenException;
import dev.fencekeeper.shedlock.FencekeeperLockProvider;
import dev.fencekeeper.shedlock.LockToken;
import dev.fencekeeper.spring.health.FencekeeperBoot3HealthIndicator;
import dev.fencekeeper.spring.health.FencekeeperHealthIndicator;
import dev.fencekeeper.spring.integration.FencedLock;
import dev.fencekeeper.spring.integration.FencekeeperLockRegistry;
import dev.fencekeeper.spring.metrics.FencingClientMetrics;
import dev.fencekeeper.testing.RefusingPorts;
import dev.fencekeeper.testing.TestCluster;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The starter's auto-configuration in real application contexts against three real nodes: which
 * beans appear when, and that each does its job on the cluster.
 */
@Timeout(120)
class FencekeeperAutoConfigurationClusterTest {
  @TempDir static Path dataDir;
  static TestCluster cluster;
  static FencingClient observer;

  @BeforeAll
  static void startCluster() {
    cluster = TestCluster.start(dataDir);
    cluster.awaitLeader();
    observer = cluster.newClient("observer");
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  private static ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                FencekeeperAutoConfiguration.class,
                FencekeeperShedLockAutoConfiguration.class,
                FencekeeperLockRegistryAutoConfiguration.class,
                FencekeeperMetricsAutoConfiguration.class,
                FencekeeperHealthAutoConfiguration.class,
                FencekeeperJdbcAutoConfiguration.class,
                MetricsAutoConfiguration.class,
                CompositeMeterRegistryAutoConfiguration.class,
                SimpleMetricsExportAutoConfiguration.class));
  }

  private static ApplicationContextRunner connected(String owner) {
    return runner()
        .withPropertyValues(
            "fencekeeper.endpoints="
                + cluster.config().clientAddresses().stream()
                    .map(PeerAddress::address)
                    .collect(java.util.stream.Collectors.joining(",")),
            "fencekeeper.cluster-name=" + cluster.config().clusterName(),
            "fencekeeper.owner=" + owner,
            "fencekeeper.request-timeout=3s");
  }

  // Guarantee: fencekeeper.* properties alone give one shared client connected to the cluster, with
  // the owner label set, and every part of the integration whose library is present.
  @Test
  void propertiesAloneConnectAClientAndEveryPart() {
    connected("app-1")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(FencingClient.class);
              assertThat(context)
                  .getBean(LockProvider.class)
                  .isInstanceOf(FencekeeperLockProvider.class);
              assertThat(context)
                  .getBean(LockRegistry.class)
                  .isInstanceOf(FencekeeperLockRegistry.class);
              assertThat(context).hasSingleBean(FencingClientMetrics.class);
              assertThat(context).hasSingleBean(FencekeeperHealthIndicator.class);
              FencingClient client = context.getBean(FencingClient.class);
              try (var lease = client.acquire("props-connect", Duration.ofSeconds(10))) {
                Result seen = observer.lease("props-connect");
                assertThat(seen.live()).isTrue();
                assertThat(seen.token()).isEqualTo(lease.token());
                assertThat(seen.holderOwner()).isEqualTo("app-1");
              }
              // The client's own figures reach Micrometer without Dropwizard's registry.
              MeterRegistry meters = context.getBean(MeterRegistry.class);
              assertThat(
                      meters
                          .get("fencekeeper.client.requests")
                          .tag("command", "ACQUIRE")
                          .functionCounter()
                          .count())
                  .isGreaterThanOrEqualTo(1);
              assertThat(
                      meters
                          .get("fencekeeper.client.request.latency")
                          .tag("command", "ACQUIRE")
                          .tag("quantile", "0.99")
                          .gauge()
                          .value())
                  .isPositive();
              assertThat(meters.get("fencekeeper.client.retries").functionCounter().count())
                  .isNotNegative();
            });
  }

  // Guarantee: TLS files, the request timeout and any other cluster setting reach the client's
  // cluster configuration from fencekeeper.* properties.
  @Test
  void tlsTimeoutsAndOtherSettingsReachTheClusterConfig() throws IOException {
    Path cert = java.nio.file.Files.writeString(dataDir.resolve("app.crt"), "");
    Path key = java.nio.file.Files.writeString(dataDir.resolve("app.key"), "");
    Path trust = java.nio.file.Files.writeString(dataDir.resolve("ca.crt"), "");
    connected("app-1")
        .withUserConfiguration(OwnClient.class)
        .withPropertyValues(
            "fencekeeper.tls.cert=" + cert,
            "fencekeeper.tls.key=" + key,
            "fencekeeper.tls.trust=" + trust,
            "fencekeeper.request-timeout=7s",
            "fencekeeper.cluster.raft.election.timeout.min=2s",
            "fencekeeper.cluster.raft.election.timeout.max=4s")
        .run(
            context -> {
              ClusterConfig config = context.getBean(ClusterConfig.class);
              assertThat(config.security().tls().cert()).isEqualTo(cert);
              assertThat(config.security().tls().key()).isEqualTo(key);
              assertThat(config.security().tls().trust()).isEqualTo(trust);
              assertThat(config.requestTimeout()).isEqualTo(Duration.ofSeconds(7));
              assertThat(config.electionTimeoutMin()).isEqualTo(Duration.ofSeconds(2));
              assertThat(config.clusterName()).isEqualTo(cluster.config().clusterName());
              assertThat(config.clientAddresses().stream().map(PeerAddress::address))
                  .containsExactlyElementsOf(
                      cluster.config().clientAddresses().stream()
                          .map(PeerAddress::address)
                          .toList());
            });
    connected("app-1")
        .withPropertyValues("fencekeeper.cluster.no.such.key=1")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .hasMessageContaining("no.such.key");
            });
  }

  // Guarantee: without fencekeeper.peers nothing is created (the starter on the class path alone is
  // inert).
  @Test
  void nothingWithoutPeers() {
    runner()
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(FencingClient.class);
              assertThat(context).doesNotHaveBean(LockProvider.class);
              assertThat(context).doesNotHaveBean(LockRegistry.class);
              assertThat(context).doesNotHaveBean(FencekeeperHealthIndicator.class);
              assertThat(context).doesNotHaveBean(JdbcFence.class);
            });
  }

  // Guarantee: with a DataSource the application gets a JdbcFence that admits the live lease's
  // token and refuses an older one, naming both.
  @Test
  void aDataSourceGetsAJdbcFenceThatRefusesStaleTokens() {
    connected("app-1")
        .withUserConfiguration(H2.class)
        .withPropertyValues("fencekeeper.jdbc.create-table=true")
        .run(
            context -> {
              JdbcFence fence = context.getBean(JdbcFence.class);
              FencingClient client = context.getBean(FencingClient.class);
              long older;
              try (var first = client.acquire("jdbc-report", Duration.ofSeconds(10))) {
                older = first.token();
              }
              try (var lease = client.acquire("jdbc-report", Duration.ofSeconds(10))) {
                fence.inTransaction(
                    lease,
                    conn ->
                        conn.createStatement()
                            .execute(
                                "CREATE TABLE report (report_day VARCHAR(10) PRIMARY KEY, body"
                                    + " VARCHAR(100))"));
                fence.inTransaction(
                    lease,
                    conn ->
                        conn.createStatement()
                            .executeUpdate("INSERT INTO report VALUES ('2026-11-29', 'newer')"));
                assertThatThrownBy(
                        () ->
                            fence.inTransaction(
                                "jdbc-report",
                                older,
                                conn ->
                                    conn.createStatement()
                                        .executeUpdate("UPDATE report SET body = 'older'")))
                    .isInstanceOf(StaleFenceTokenException.class)
                    .hasMessageContaining(Long.toString(older))
                    .hasMessageContaining(Long.toString(lease.token()));
                assertThat(fence.acceptedToken("jdbc-report")).hasValue(lease.token());
              }
            });
    connected("app-1")
        .withUserConfiguration(H2.class)
        .withPropertyValues("fencekeeper.jdbc.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(JdbcFence.class));
  }

  // Guarantee: bad settings fail the context with the cluster configuration's own message.
  @Test
  void badPeersFailTheContextWithAClearMessage() {
    runner()
        .withPropertyValues("fencekeeper.peers=not-a-peer")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("peers");
            });
    // A Raft address where a client endpoint belongs is refused with the client port to use.
    runner()
        .withPropertyValues("fencekeeper.endpoints=n1@127.0.0.1:7301")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .hasMessageContaining("is a Raft peer address")
                  .hasMessageContaining("127.0.0.1:7501");
            });
  }

  // Guarantee: the ShedLock provider appears only with ShedLock's Spring support, and can be
  // switched off.
  @Test
  void shedLockProviderNeedsShedLockSpringAndCanBeDisabled() {
    connected("app-1")
        .withClassLoader(new FilteredClassLoader(EnableSchedulerLock.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(LockProvider.class);
            });
    connected("app-1")
        .withPropertyValues("fencekeeper.shedlock.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(LockProvider.class));
  }

  // Guarantee: an application's own client is used by every part instead of a second connection,
  // with or without fencekeeper.peers.
  @Test
  void anApplicationsOwnClientWins() {
    runner()
        .withUserConfiguration(OwnClient.class)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(FencingClient.class);
              assertThat(context)
                  .getBean(LockProvider.class)
                  .isInstanceOf(FencekeeperLockProvider.class);
              assertThat(context).hasSingleBean(FencekeeperLockRegistry.class);
              assertThat(context).hasSingleBean(FencekeeperHealthIndicator.class);
            });
    connected("ignored")
        .withUserConfiguration(OwnClient.class)
        .run(
            context -> {
              assertThat(context).hasSingleBean(FencingClient.class);
              FencingClient own = context.getBean(FencingClient.class);
              assertThat(own).isSameAs(OwnClient.client);
              FencedLock lock = context.getBean(FencekeeperLockRegistry.class).obtain("own-client");
              lock.lock();
              try {
                assertThat(observer.lease("own-client").holderOwner()).isEqualTo("own");
              } finally {
                lock.unlock();
              }
            });
  }

  // Guarantee: a user who adds the starter and ShedLock and annotates a job gets a fencekeeper lock
  // with a token the job can read, and nothing else to write; a second instance is kept out
  // meanwhile.
  @Test
  void anAnnotatedJobRunsUnderAFencedLock() {
    connected("app-1")
        .withPropertyValues("fencekeeper.shedlock.resource-prefix=jobs/")
        .withUserConfiguration(ScheduledJob.class)
        .run(
            context -> {
              ReportJob job = context.getBean(ReportJob.class);
              job.run();
              // The bean is ShedLock's proxy: read what the job saw through methods, not fields.
              LockToken seen = job.seen();
              assertThat(seen.lockName()).isEqualTo("annotated-report");
              assertThat(seen.resource()).isEqualTo("jobs/annotated-report");
              assertThat(seen.token()).isEqualTo(job.leaseDuringRun().token());
              assertThat(job.leaseDuringRun().holderOwner()).isEqualTo("app-1");
              assertThat(job.secondInstanceGotIt()).isFalse();
              assertThat(observer.lease("jobs/annotated-report").live()).isFalse();
            });
  }

  // Guarantee: the LockRegistry's locks are leases whose token the holder reads; another instance
  // waits, and the next holder's token is newer.
  @Test
  void lockRegistryLocksCarryTheirToken() {
    connected("app-1")
        .run(
            app1 ->
                connected("app-2")
                    .run(
                        app2 -> {
                          FencedLock mine =
                              app1.getBean(FencekeeperLockRegistry.class).obtain("orders");
                          FencedLock theirs =
                              app2.getBean(FencekeeperLockRegistry.class).obtain("orders");
                          mine.lock();
                          long first;
                          try {
                            first = mine.token();
                            assertThat(observer.lease("orders").token()).isEqualTo(first);
                            assertThat(theirs.tryLock()).isFalse();
                            assertThat(mine.tryLock())
                                .describedAs("reentrant for the holding thread")
                                .isTrue();
                            mine.unlock();
                            assertThat(observer.lease("orders").live())
                                .describedAs("still held once")
                                .isTrue();
                          } finally {
                            mine.unlock();
                          }
                          assertThat(theirs.tryLock(Duration.ofSeconds(10), Duration.ofSeconds(10)))
                              .isTrue();
                          try {
                            assertThat(theirs.token()).isGreaterThan(first);
                            assertThat(theirs.lease().write("total", "42").isAccepted()).isTrue();
                          } finally {
                            theirs.unlock();
                          }
                          assertThatThrownBy(mine::token).isInstanceOf(IllegalStateException.class);
                        }));
  }

  // Guarantee: a lock whose lease the cluster ended is reported on unlock, and its token is
  // refused.
  @Test
  void aLostLeaseIsReportedOnUnlockAndItsTokenIsRefused() {
    connected("app-1")
        .run(
            context -> {
              FencedLock lock = context.getBean(FencekeeperLockRegistry.class).obtain("revoked");
              lock.lock();
              long token = lock.token();
              var lease = lock.lease();
              assertThat(observer.revoke("revoked", "test").code()).isEqualTo(ResultCode.REVOKED);
              await().atMost(Duration.ofSeconds(30)).until(() -> !lease.isValid());
              assertThat(lease.write("k", "late").code()).isNotEqualTo(ResultCode.ACCEPTED);
              assertThatThrownBy(lock::unlock)
                  .isInstanceOf(IllegalStateException.class)
                  .hasMessageContaining("token " + token);
              assertThat(lock.tryLock())
                  .describedAs("free again here after the failed unlock")
                  .isTrue();
              lock.unlock();
            });
  }

  // Guarantee: the client's request counts, latencies and counters reach the application's
  // MeterRegistry.
  @Test
  void clientMetricsReachMicrometer() {
    connected("app-1")
        .run(
            context -> {
              FencingClient client = context.getBean(FencingClient.class);
              client.acquire("metered", Duration.ofSeconds(5)).close();
              MeterRegistry registry = context.getBean(MeterRegistry.class);
              assertThat(
                      registry
                          .get("fencekeeper.client.requests")
                          .tag("command", "ACQUIRE")
                          .functionCounter()
                          .count())
                  .isGreaterThanOrEqualTo(1);
              assertThat(
                      registry
                          .get("fencekeeper.client.requests")
                          .tag("command", "RELEASE")
                          .functionCounter()
                          .count())
                  .isGreaterThanOrEqualTo(1);
              assertThat(
                      registry
                          .get("fencekeeper.client.request.latency")
                          .tag("command", "ACQUIRE")
                          .tag("quantile", "0.99")
                          .gauge()
                          .value())
                  .isPositive();
              assertThat(registry.get("fencekeeper.client.leases.lost").functionCounter().count())
                  .isZero();
            });
  }

  // Guarantee: health is UP naming the leader while it answers, DOWN when no node does.
  @Test
  void healthFollowsTheLeader() throws IOException {
    connected("app-1")
        .run(
            context -> {
              Health health = context.getBean(FencekeeperHealthIndicator.class).health(true);
              assertThat(health.getStatus()).isEqualTo(Status.UP);
              assertThat(health.getDetails().get("leader")).isEqualTo(cluster.awaitLeader());
              assertThat(context)
                  .describedAs("Spring Boot 3's indicator stays out where Boot 4's health is")
                  .doesNotHaveBean(FencekeeperBoot3HealthIndicator.class);
            });
    try (RefusingPorts refusing = RefusingPorts.open(3)) {
      String deadPeers = refusing.peersWithIds();
      runner()
          .withPropertyValues("fencekeeper.peers=" + deadPeers, "fencekeeper.health.timeout=500ms")
          .run(
              context -> {
                Health health = context.getBean(FencekeeperHealthIndicator.class).health(true);
                assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                assertThat(health.getDetails()).containsEntry("state", "UNREACHABLE");
                assertThat(health.getDetails().get("reason").toString())
                    .contains("no node answered within 500ms");
              });
    }
    connected("app-1")
        .withPropertyValues("management.health.fencekeeper.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(FencekeeperHealthIndicator.class));
  }

  // Guarantee: IDEs complete the properties: the metadata names each with its description and
  // default.
  @Test
  void configurationMetadataDescribesTheProperties() throws IOException {
    String metadata;
    try (InputStream in =
        getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).isNotNull();
      metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertThat(metadata)
        .contains(
            "\"name\": \"fencekeeper.endpoints\"",
            "\"name\": \"fencekeeper.peers\"",
            "\"name\": \"fencekeeper.owner\"",
            "\"name\": \"fencekeeper.tls.trust\"",
            "\"name\": \"fencekeeper.lock-registry.ttl\"",
            "\"name\": \"fencekeeper.shedlock.resource-prefix\"",
            "\"name\": \"fencekeeper.health.timeout\"",
            "\"name\": \"fencekeeper.jdbc.table\"",
            "\"name\": \"fencekeeper.shedlock.keep-alive\"",
            "\"name\": \"management.health.fencekeeper.enabled\"");
    assertThat(metadata).contains("The nodes' client ports as host:port");
  }

  @Configuration(proxyBeanMethods = false)
  static class H2 {
    @Bean
    DataSource dataSource() {
      JdbcDataSource ds = new JdbcDataSource();
      ds.setURL("jdbc:h2:mem:fence-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1");
      return ds;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnClient {
    static FencingClient client;

    @Bean
    FencingClient ownFencingClient() {
      client = FencingClient.connect(cluster.config(), "own");
      return client;
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableSchedulerLock(
      defaultLockAtMostFor = "30s",
      interceptMode = EnableSchedulerLock.InterceptMode.PROXY_METHOD)
  static class ScheduledJob {
    @Bean
    ReportJob reportJob() {
      return new ReportJob();
    }
  }

  static class ReportJob {
    final AtomicReference<LockToken> seen = new AtomicReference<>();
    final AtomicReference<Result> leaseDuringRun = new AtomicReference<>();
    final AtomicReference<Boolean> secondInstanceGotIt = new AtomicReference<>();

    public LockToken seen() {
      return seen.get();
    }

    public Result leaseDuringRun() {
      return leaseDuringRun.get();
    }

    public boolean secondInstanceGotIt() {
      return secondInstanceGotIt.get();
    }

    @SchedulerLock(name = "annotated-report", lockAtMostFor = "20s")
    public void run() {
      seen.set(LockToken.current());
      leaseDuringRun.set(observer.lease(LockToken.current().resource()));
      FencekeeperLockProvider secondInstance =
          FencekeeperLockProvider.builder(observer).resourcePrefix("jobs/").build();
      secondInstanceGotIt.set(
          secondInstance
              .lock(
                  new net.javacrumbs.shedlock.core.LockConfiguration(
                      java.time.Instant.now(),
                      "annotated-report",
                      Duration.ofSeconds(5),
                      Duration.ZERO))
              .isPresent());
    }
  }
}
