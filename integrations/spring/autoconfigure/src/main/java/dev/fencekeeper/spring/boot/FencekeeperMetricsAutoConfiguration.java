package dev.fencekeeper.spring.boot;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.jdbc.JdbcFence;
import dev.fencekeeper.shedlock.FencekeeperLockProvider;
import dev.fencekeeper.spring.integration.FencekeeperLockRegistry;
import dev.fencekeeper.spring.metrics.FencingClientMetrics;
import dev.fencekeeper.spring.metrics.IntegrationMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The client's metrics, and the counts of refused fenced transactions and skipped lock attempts, in
 * the application's Micrometer registry (Boot binds every MeterBinder bean).
 */
@AutoConfiguration(
    after = {
      FencekeeperAutoConfiguration.class,
      FencekeeperJdbcAutoConfiguration.class,
      FencekeeperShedLockAutoConfiguration.class,
      FencekeeperLockRegistryAutoConfiguration.class
    })
@ConditionalOnClass(MeterBinder.class)
@EnableConfigurationProperties(FencekeeperProperties.class)
public class FencekeeperMetricsAutoConfiguration {

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnBean(FencingClient.class)
  static class Client {
    @Bean
    @ConditionalOnMissingBean
    FencingClientMetrics fencingClientMetrics(FencingClient client) {
      return new FencingClientMetrics(client.metrics());
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "dev.fencekeeper.jdbc.JdbcFence")
  @ConditionalOnBean(JdbcFence.class)
  static class Jdbc {
    @Bean
    MeterBinder fencekeeperJdbcMetrics(JdbcFence fence) {
      return registry -> IntegrationMetrics.bindRefusals(registry, fence);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "dev.fencekeeper.shedlock.FencekeeperLockProvider")
  @ConditionalOnBean(FencekeeperLockProvider.class)
  static class ShedLock {
    @Bean
    MeterBinder fencekeeperShedLockMetrics(FencekeeperLockProvider provider) {
      return registry -> IntegrationMetrics.bindSkips(registry, provider);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.integration.support.locks.LockRegistry")
  @ConditionalOnBean(FencekeeperLockRegistry.class)
  static class LockRegistry {
    @Bean
    MeterBinder fencekeeperLockRegistryMetrics(FencekeeperLockRegistry lockRegistry) {
      return registry -> IntegrationMetrics.bindSkips(registry, lockRegistry);
    }
  }
}
