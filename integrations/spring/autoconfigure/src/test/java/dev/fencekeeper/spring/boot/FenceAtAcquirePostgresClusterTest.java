package dev.fencekeeper.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.jdbc.JdbcFence;
import dev.fencekeeper.jdbc.StaleFenceTokenException;
import dev.fencekeeper.shedlock.FencekeeperLock;
import dev.fencekeeper.shedlock.FencekeeperLockProvider;
import dev.fencekeeper.spring.integration.FencedLock;
import dev.fencekeeper.spring.integration.FencekeeperLockRegistry;
import dev.fencekeeper.testing.RefusingPorts;
import dev.fencekeeper.testing.TestCluster;
import io.micrometer.core.instrument.MeterRegistry;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The starter with a real PostgreSQL (embedded, no Docker) and a real cluster: fencekeeper's
 * migration beside an application's own {@code V1__}, the guard row raised when a ShedLock lock or
 * a LockRegistry lock is granted, and lock attempts that fail quietly and are counted.
 */
@Timeout(180)
class FenceAtAcquirePostgresClusterTest {
  private static final AtomicInteger DATABASES = new AtomicInteger();

  @TempDir static Path dataDir;
  static TestCluster cluster;
  static FencingClient observer;
  static EmbeddedPostgres postgres;

  @BeforeAll
  static void start() throws IOException {
    postgres = EmbeddedPostgres.builder().start();
    cluster = TestCluster.start(dataDir);
    cluster.awaitLeader();
    observer = cluster.newClient("observer");
  }

  @AfterAll
  static void stop() throws IOException {
    cluster.close();
    postgres.close();
  }

  private static ApplicationContextRunner app(String owner, DataSource database) {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                FencekeeperAutoConfiguration.class,
                FencekeeperShedLockAutoConfiguration.class,
                FencekeeperLockRegistryAutoConfiguration.class,
                FencekeeperJdbcAutoConfiguration.class,
                FencekeeperMetricsAutoConfiguration.class,
                MetricsAutoConfiguration.class,
                CompositeMeterRegistryAutoConfiguration.class,
                SimpleMetricsExportAutoConfiguration.class))
        .withBean(DataSource.class, () -> database)
        .withUserConfiguration(ApplicationMigration.class)
        .withPropertyValues(
            "fencekeeper.peers=" + cluster.config().toProperties().getProperty("peers"),
            "fencekeeper.cluster-name=" + cluster.config().clusterName(),
            "fencekeeper.owner=" + owner,
            "fencekeeper.request-timeout=3s");
  }

  // Guarantee: an application with its own Flyway V1__ starts with the starter: fencekeeper's
  // migration runs in a Flyway history of its own, after the application's, and both apply.
  // Guarantee: with fence at acquire (the default), a holder whose lock has ended is refused from
  // the moment a newer holder has acquired, before the newer one writes anything.
  @Test
  void aStaleHolderIsRefusedOnceANewerOneHasAcquiredBeforeItWrites() throws Exception {
    DataSource database = newDatabase();
    app("app-a", database)
        .run(
            a ->
                app("app-b", database)
                    .run(
                        b -> {
                          assertThat(a).hasNotFailed();
                          assertThat(appliedVersions(database, "flyway_schema_history"))
                              .containsExactly("1");
                          assertThat(appliedVersions(database, "fencekeeper_schema_history"))
                              .contains("1");

                          long stale = lockAndLetExpire(a.getBean(LockProvider.class), "report");
                          SimpleLock newer = lock(b.getBean(LockProvider.class), "report");
                          long newerToken = ((FencekeeperLock) newer).token();
                          assertThat(newerToken).isGreaterThan(stale);
                          assertThat(reports(database)).describedAs("B wrote nothing").isZero();
                          // The guard row knows of B's token already: raised at B's acquire.
                          assertThat(b.getBean(JdbcFence.class).acceptedToken("report"))
                              .hasValue(newerToken);

                          JdbcFence staleFence = a.getBean(JdbcFence.class);
                          assertThatThrownBy(
                                  () ->
                                      staleFence.inTransaction(
                                          "report", stale, conn -> insertReport(conn, "A")))
                              .isInstanceOf(StaleFenceTokenException.class)
                              .satisfies(
                                  e ->
                                      assertThat(((StaleFenceTokenException) e).newerToken())
                                          .isEqualTo(newerToken));
                          assertThat(reports(database)).isZero();
                          assertThat(
                                  a.getBean(MeterRegistry.class)
                                      .get("fencekeeper.jdbc.transactions.refused")
                                      .functionCounter()
                                      .count())
                              .isEqualTo(1);

                          b.getBean(JdbcFence.class)
                              .inTransaction("report", newerToken, conn -> insertReport(conn, "B"));
                          assertThat(reports(database)).isEqualTo(1);
                          newer.unlock();
                        }));
  }

  // Guarantee (the weaker default of a bare guard, documented): without fence at acquire the guard
  // row learns of the newer token only when its holder writes; the stale holder's raw token is
  // still refused, by the cluster's check, before its transaction opens.
  @Test
  void withoutFenceAtAcquireTheGuardRowWaitsForTheNewerHoldersWrite() throws Exception {
    DataSource database = newDatabase();
    app("app-a", database)
        .withPropertyValues("fencekeeper.shedlock.fence-at-acquire=false")
        .run(
            a -> {
              long stale = lockAndLetExpire(a.getBean(LockProvider.class), "late-report");
              SimpleLock newer = lock(a.getBean(LockProvider.class), "late-report");
              JdbcFence fence = a.getBean(JdbcFence.class);
              assertThat(fence.acceptedToken("late-report")).isEmpty();
              assertThatThrownBy(
                      () ->
                          fence.inTransaction(
                              "late-report", stale, conn -> insertReport(conn, "A")))
                  .isInstanceOf(StaleFenceTokenException.class)
                  .hasMessageContaining("the cluster has issued token");
              assertThat(reports(database)).isZero();
              newer.unlock();
            });
  }

  // Guarantee: a lock whose guard row already holds a newer token is given back at once and its
  // run skipped, with one log line and a count, never a task under a token the database refuses.
  @Test
  void aLockTheDatabaseAlreadyOutranksIsReleasedAndCounted() throws Exception {
    DataSource database = newDatabase();
    app("app-a", database)
        .run(
            a -> {
              outrank(database, "outranked");
              ListAppender<ILoggingEvent> log = capture(FencekeeperLockProvider.class);
              Optional<SimpleLock> lock =
                  a.getBean(LockProvider.class).lock(config("outranked", Duration.ofSeconds(10)));
              assertThat(lock).isEmpty();
              assertThat(observer.lease("outranked").live()).describedAs("released").isFalse();
              assertThat(skipped(a.getBean(MeterRegistry.class), "shedlock", "fence_failed"))
                  .isEqualTo(1);
              assertThat(log.list).hasSize(1);
              assertThat(log.list.get(0).getFormattedMessage())
                  .contains("outranked", "raising the fence at acquire failed", "STALE_TOKEN");
              assertThat(log.list.get(0).getThrowableProxy()).isNull();
            });
  }

  // Guarantee: with no node reachable, a ShedLock attempt skips its run with one log line and no
  // stack trace (no LockException for the scheduler to print), and is counted.
  @Test
  void anUnreachableClusterSkipsTheRunQuietlyAndIsCounted() throws Exception {
    try (RefusingPorts refusing = RefusingPorts.open(3)) {
      String deadPeers = refusing.peersWithIds();
      app("app-a", newDatabase())
          .withPropertyValues("fencekeeper.peers=" + deadPeers, "fencekeeper.request-timeout=1s")
          .run(
              a -> {
                ListAppender<ILoggingEvent> log = capture(FencekeeperLockProvider.class);
                LockProvider provider = a.getBean(LockProvider.class);
                assertThat(provider.lock(config("unreachable", Duration.ofSeconds(10)))).isEmpty();
                assertThat(skipped(a.getBean(MeterRegistry.class), "shedlock", "unavailable"))
                    .isEqualTo(1);
                assertThat(log.list).hasSize(1);
                assertThat(log.list.get(0).getFormattedMessage())
                    .contains("unreachable", "run skipped", "UNAVAILABLE");
                assertThat(log.list.get(0).getThrowableProxy()).isNull();
              });
    }
  }

  // Guarantee: a LockRegistry lock raises its guard row to its token before lock() returns (the
  // default with a JdbcFence), so an earlier holder's token is refused before the new holder
  // writes.
  @Test
  void aLockRegistryLockRaisesTheGuardRowBeforeItIsHandedOver() throws Exception {
    DataSource database = newDatabase();
    app("app-a", database)
        .withPropertyValues("fencekeeper.lock-registry.resource-prefix=jobs/")
        .run(
            a ->
                app("app-b", database)
                    .withPropertyValues("fencekeeper.lock-registry.resource-prefix=jobs/")
                    .run(
                        b -> {
                          FencedLock earlier =
                              a.getBean(FencekeeperLockRegistry.class).obtain("report");
                          earlier.lock();
                          long earlierToken = earlier.token();
                          JdbcFence fenceA = a.getBean(JdbcFence.class);
                          assertThat(fenceA.acceptedToken("jobs/report")).hasValue(earlierToken);
                          earlier.unlock();

                          FencedLock newer =
                              b.getBean(FencekeeperLockRegistry.class).obtain("report");
                          assertThat(newer.tryLock(10, TimeUnit.SECONDS)).isTrue();
                          long newerToken = newer.token();
                          assertThat(newerToken).isGreaterThan(earlierToken);
                          assertThat(fenceA.acceptedToken("jobs/report"))
                              .describedAs("raised at B's lock(), before B wrote anything")
                              .hasValue(newerToken);
                          assertThatThrownBy(
                                  () ->
                                      fenceA.inTransaction(
                                          "jobs/report",
                                          earlierToken,
                                          conn -> insertReport(conn, "A")))
                              .isInstanceOf(StaleFenceTokenException.class);
                          assertThat(reports(database)).isZero();
                          newer.unlock();
                        }));
  }

  // Guarantee: a LockRegistry lock whose guard row cannot be raised is given back at once, the lock
  // attempt fails with the cause, and it is counted; with fence-at-acquire off the row is
  // untouched.
  @Test
  void aLockRegistryLockWhoseFenceFailsIsGivenBackAndCounted() throws Exception {
    DataSource database = newDatabase();
    app("app-a", database)
        .run(
            a -> {
              outrank(database, "outranked-lock");
              FencedLock lock = a.getBean(FencekeeperLockRegistry.class).obtain("outranked-lock");
              assertThatThrownBy(lock::tryLock)
                  .isInstanceOf(IllegalStateException.class)
                  .hasMessageContaining("outranked-lock")
                  .hasMessageContaining("given back")
                  .hasCauseInstanceOf(StaleFenceTokenException.class);
              assertThat(observer.lease("outranked-lock").live()).describedAs("released").isFalse();
              assertThat(skipped(a.getBean(MeterRegistry.class), "lock-registry", "fence_failed"))
                  .isEqualTo(1);
            });
    app("app-a", database)
        .withPropertyValues("fencekeeper.lock-registry.fence-at-acquire=false")
        .run(
            a -> {
              FencedLock lock = a.getBean(FencekeeperLockRegistry.class).obtain("unfenced-lock");
              assertThat(lock.tryLock()).isTrue();
              assertThat(a.getBean(JdbcFence.class).acceptedToken("unfenced-lock")).isEmpty();
              lock.unlock();
            });
  }

  /** A guard row poisoned by a made-up token (as an older fencekeeper-jdbc allowed). */
  private static void outrank(DataSource database, String resource) throws SQLException {
    try (Connection c = database.getConnection();
        Statement st = c.createStatement()) {
      st.execute(
          "INSERT INTO fencekeeper_fence VALUES ('"
              + resource
              + "', "
              + Long.MAX_VALUE / 2
              + ", now())");
    }
  }

  private static long lockAndLetExpire(LockProvider provider, String name) {
    SimpleLock lock =
        provider.lock(config(name, Duration.ofSeconds(1))).orElseThrow(AssertionError::new);
    long token = ((FencekeeperLock) lock).token();
    await().atMost(Duration.ofSeconds(30)).until(() -> !observer.lease(name).live());
    return token;
  }

  private static SimpleLock lock(LockProvider provider, String name) {
    return await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> provider.lock(config(name, Duration.ofSeconds(30))), Optional::isPresent)
        .orElseThrow();
  }

  private static LockConfiguration config(String name, Duration lockAtMostFor) {
    return new LockConfiguration(Instant.now(), name, lockAtMostFor, Duration.ZERO);
  }

  private static double skipped(MeterRegistry registry, String integration, String reason) {
    return registry
        .get("fencekeeper.lock.attempts.skipped")
        .tag("integration", integration)
        .tag("reason", reason)
        .functionCounter()
        .count();
  }

  private static ListAppender<ILoggingEvent> capture(Class<?> type) {
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    ((Logger) LoggerFactory.getLogger(type)).addAppender(appender);
    return appender;
  }

  private static int insertReport(Connection conn, String by) throws SQLException {
    try (Statement s = conn.createStatement()) {
      return s.executeUpdate(
          "INSERT INTO daily_report VALUES ('2026-11-29', 'by "
              + by
              + "')"
              + " ON CONFLICT (report_day) DO UPDATE SET body = EXCLUDED.body");
    }
  }

  private static int reports(DataSource database) throws SQLException {
    try (Connection c = database.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM daily_report")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static List<String> appliedVersions(DataSource database, String historyTable)
      throws SQLException {
    List<String> versions = new java.util.ArrayList<>();
    try (Connection c = database.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT version FROM "
                    + historyTable
                    + " WHERE success AND type <> 'BASELINE'"
                    + " ORDER BY installed_rank")) {
      while (rs.next()) {
        versions.add(rs.getString(1));
      }
    }
    return versions;
  }

  private static DataSource newDatabase() throws SQLException {
    String name = "app" + DATABASES.incrementAndGet();
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setServerNames(new String[] {"127.0.0.1"});
    ds.setPortNumbers(new int[] {postgres.getPort()});
    ds.setDatabaseName(name);
    ds.setUser("postgres");
    return ds;
  }

  /**
   * The application's own Flyway history, as Boot's Flyway auto-configuration runs it: version 1 in
   * {@code flyway_schema_history}, at start-up, before fencekeeper's run.
   */
  @Configuration(proxyBeanMethods = false)
  static class ApplicationMigration {
    @Bean
    InitializingBean applicationFlyway(DataSource dataSource) {
      return () ->
          Flyway.configure()
              .dataSource(dataSource)
              .locations("classpath:db/app-migration")
              .load()
              .migrate();
    }
  }
}
