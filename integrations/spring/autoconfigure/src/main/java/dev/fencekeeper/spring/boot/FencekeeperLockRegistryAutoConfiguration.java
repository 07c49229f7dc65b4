package dev.fencekeeper.spring.boot;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.spring.integration.FencekeeperLockRegistry;
import dev.fencekeeper.spring.integration.LeaseFence;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A Spring Integration {@link LockRegistry} whose locks are fencekeeper leases with tokens; with a
 * {@link LeaseFence} bean (a {@code JdbcFence} provides one), each grant raises the guard row
 * first.
 */
@AutoConfiguration(
    after = {FencekeeperAutoConfiguration.class, FencekeeperJdbcAutoConfiguration.class})
@ConditionalOnClass(LockRegistry.class)
@ConditionalOnBean(FencingClient.class)
@ConditionalOnProperty(
    prefix = "fencekeeper.lock-registry",
    name = "enabled",
    matchIfMissing = true)
@EnableConfigurationProperties(FencekeeperProperties.class)
public class FencekeeperLockRegistryAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(LockRegistry.class)
  public FencekeeperLockRegistry fencekeeperLockRegistry(
      FencingClient client, FencekeeperProperties properties, ObjectProvider<LeaseFence> fence) {
    FencekeeperProperties.LockRegistry settings = properties.getLockRegistry();
    LeaseFence atAcquire = fence.getIfAvailable();
    return atAcquire == null
        ? new FencekeeperLockRegistry(client, settings.getResourcePrefix(), settings.getTtl())
        : new FencekeeperLockRegistry(
            client, settings.getResourcePrefix(), settings.getTtl(), atAcquire);
  }
}
