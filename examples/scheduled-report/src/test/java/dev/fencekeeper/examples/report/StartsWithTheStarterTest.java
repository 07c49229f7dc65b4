package dev.fencekeeper.examples.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.jdbc.JdbcFence;
import dev.fencekeeper.shedlock.FencekeeperLockProvider;
import dev.fencekeeper.spring.integration.FencedLock;
import dev.fencekeeper.spring.integration.FencekeeperLockRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The example application started in this JVM with the starter and nothing else fencekeeper-
 * specific, beside what a service already has: its own Flyway {@code V1__}, Actuator and Spring
 * Integration. On Spring Boot 3.5 (Spring Integration 6.5) as on 4.0 (7), every part is there and
 * works. Shares the cluster and the PostgreSQL server of {@link ThreeInstancesDrillTest}.
 */
@Timeout(480)
class StartsWithTheStarterTest {
  private static final String BOOT3_HEALTH = "org.springframework.boot.actuate.health.HealthIndicator";
  private static final String BOOT4_HEALTH =
      "org.springframework.boot.health.contributor.HealthIndicator";
  private static final String DISTRIBUTED_LOCK =
      "org.springframework.integration.support.locks.DistributedLock";

  // Guarantee: on either Spring Boot line the application starts with the starter, gets the
  // ShedLock provider, the JdbcFence, a working LockRegistry, the health contributor (UP, naming the
  // leader) and the counters; fencekeeper's migration and the application's own V1__ both apply.
  @Test
  void startsWithTheStarterOnThisSpringBootLine() throws Exception {
    String line = SpringBootVersion.getVersion();
    System.out.println("Spring Boot " + line);
    ThreeInstancesDrillTest.startClusterAndDatabaseOnce();
    DataSource database = ThreeInstancesDrillTest.newDatabase("startup");
    try (ConfigurableApplicationContext app =
        new SpringApplicationBuilder(ScheduledReportApplication.class)
            .run(
                "--spring.main.banner-mode=off",
                "--fencekeeper.endpoints=" + ThreeInstancesDrillTest.cluster.peers(),
                "--spring.datasource.url=jdbc:postgresql://127.0.0.1:"
                    + ThreeInstancesDrillTest.postgres.getPort()
                    + "/startup",
                "--spring.datasource.username=postgres",
                "--report.instance=startup",
                "--report.cron=-")) {
      assertThat(app.getBean(LockProvider.class)).isInstanceOf(FencekeeperLockProvider.class);
      assertThat(app.getBean(JdbcFence.class)).isNotNull();
      assertThat(app.getBean(MeterRegistry.class).find("fencekeeper.jdbc.transactions.refused").functionCounter())
          .isNotNull();

      LockRegistry registry = app.getBean(LockRegistry.class);
      assertThat(registry).isInstanceOf(FencekeeperLockRegistry.class);
      FencedLock lock = ((FencekeeperLockRegistry) registry).obtain("startup-check");
      lock.lock();
      try {
        assertThat(lock.token()).isPositive();
        assertThat(lock.resource()).isEqualTo("startup-check");
      } finally {
        lock.unlock();
      }
      if (present(DISTRIBUTED_LOCK)) {
        assertThat(Class.forName(DISTRIBUTED_LOCK).isInstance(lock))
            .describedAs("on Spring Integration 7 a FencedLock is a DistributedLock")
            .isTrue();
      }

      Object indicator = app.getBean("fencekeeperHealthIndicator");
      String lineHealth = line.startsWith("3.") ? BOOT3_HEALTH : BOOT4_HEALTH;
      assertThat(Class.forName(lineHealth).isInstance(indicator)).isTrue();
      Object health = call(indicator, "health");
      assertThat(call(health, "getStatus").toString()).isEqualTo("UP");
      assertThat(((Map<?, ?>) call(health, "getDetails")).get("state")).isEqualTo("LEADER");

      assertThat(versions(database, "flyway_schema_history")).containsExactly("1");
      assertThat(versions(database, "fencekeeper_schema_history")).containsExactly("1");
    }
  }

  private static boolean present(String className) {
    try {
      Class.forName(className);
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  /** Calls a public no-argument method by name: the health types differ between the lines. */
  private static Object call(Object target, String method) throws Exception {
    Method m = target.getClass().getMethod(method);
    m.setAccessible(true);
    return m.invoke(target);
  }

  private static List<String> versions(DataSource database, String historyTable)
      throws SQLException {
    List<String> versions = new ArrayList<>();
    try (Connection c = database.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT version FROM "
                    + historyTable
                    + " WHERE success AND version <> '0' ORDER BY installed_rank")) {
      while (rs.next()) {
        versions.add(rs.getString(1));
      }
    }
    return versions;
  }
}
