package dev.fencekeeper.spring.boot;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.jdbc.JdbcFence;
import dev.fencekeeper.shedlock.AcquireFence;
import dev.fencekeeper.spring.integration.LeaseFence;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A {@link JdbcFence} on the application's {@link DataSource}, for jobs to guard their transactions
 * with their lease's token, bound to the application's {@link FencingClient} when there is one: its
 * {@code acquire} raises the guard row before it returns, and a raw {@code (resource, token)} (a
 * ShedLock lock's) is checked with the cluster before the guard row moves. With Flyway on the class
 * path it also migrates the fence table in a Flyway run of its own; with fencekeeper-shedlock,
 * every granted ShedLock lock raises its guard row before the task runs, and with Spring
 * Integration every lock the LockRegistry grants raises it before {@code lock()} returns.
 */
@AutoConfiguration(
    after = FencekeeperAutoConfiguration.class,
    // Where DataSourceAutoConfiguration lives on Spring Boot 4 and on Spring Boot 3.
    afterName = {
      "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration"
    })
@ConditionalOnClass({JdbcFence.class, DataSource.class})
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnProperty(prefix = "fencekeeper.jdbc", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(FencekeeperProperties.class)
public class FencekeeperJdbcAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public JdbcFence jdbcFence(
      DataSource dataSource,
      FencekeeperProperties properties,
      ObjectProvider<FencingClient> client) {
    FencekeeperProperties.Jdbc settings = properties.getJdbc();
    JdbcFence.Builder fence =
        JdbcFence.builder(dataSource)
            .table(settings.getTable())
            .createTable(settings.isCreateTable())
            .advanceLockWait(settings.getAdvanceLockWait());
    client.ifAvailable(fence::client);
    return fence.build();
  }

  /** fencekeeper's own Flyway run: the fence table, with a history table of its own. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.flywaydb.core.Flyway")
  @ConditionalOnProperty(
      prefix = "fencekeeper.jdbc.flyway",
      name = "enabled",
      matchIfMissing = true)
  static class FlywayMigration {
    @Bean
    @ConditionalOnMissingBean
    FencekeeperFlywayMigration fencekeeperFlywayMigration(
        DataSource dataSource, FencekeeperProperties properties) {
      return new FencekeeperFlywayMigration(
          dataSource, properties.getJdbc().getFlyway().getTable());
    }
  }

  /**
   * Each granted ShedLock lock raises its resource's guard row to its token before the task runs,
   * so a previous holder is refused from then on, not only from this holder's first write. The
   * lock's token is raw (ShedLock hands out no Lease), so the fence checks it with the cluster
   * first.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "dev.fencekeeper.shedlock.AcquireFence")
  @ConditionalOnProperty(
      prefix = "fencekeeper.shedlock",
      name = "fence-at-acquire",
      matchIfMissing = true)
  static class FenceAtAcquire {
    @Bean
    @ConditionalOnMissingBean
    AcquireFence fencekeeperAcquireFence(ObjectProvider<JdbcFence> fence) {
      return lock -> fence.getObject().advance(lock.resource(), lock.token());
    }
  }

  /**
   * Each lock the {@code LockRegistry} grants raises its resource's guard row to its lease's token
   * before {@code lock()} returns. The token comes from a lease, so no check with the cluster is
   * needed.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.integration.support.locks.LockRegistry")
  @ConditionalOnProperty(
      prefix = "fencekeeper.lock-registry",
      name = "fence-at-acquire",
      matchIfMissing = true)
  static class LockRegistryFenceAtAcquire {
    @Bean
    @ConditionalOnMissingBean
    LeaseFence fencekeeperLeaseFence(ObjectProvider<JdbcFence> fence) {
      return lease -> fence.getObject().advance(lease);
    }
  }
}
