package dev.fencekeeper.spring.boot;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.shedlock.AcquireFence;
import dev.fencekeeper.shedlock.FencekeeperLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The ShedLock {@link LockProvider} on fencekeeper, once the application has ShedLock's Spring
 * support (the starter brings shedlock-core and fencekeeper-shedlock, not shedlock-spring). An
 * application's own LockProvider wins. With a JdbcFence (and {@code
 * fencekeeper.shedlock.fence-at-acquire}, on by default) every granted lock first raises its guard
 * row to the new token.
 */
@AutoConfiguration(after = FencekeeperAutoConfiguration.class)
@ConditionalOnClass(
    value = FencekeeperLockProvider.class,
    name = "net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock")
@ConditionalOnBean(FencingClient.class)
@ConditionalOnProperty(prefix = "fencekeeper.shedlock", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(FencekeeperProperties.class)
public class FencekeeperShedLockAutoConfiguration {

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean(LockProvider.class)
  public FencekeeperLockProvider fencekeeperLockProvider(
      FencingClient client,
      FencekeeperProperties properties,
      ObjectProvider<AcquireFence> acquireFence) {
    return FencekeeperLockProvider.builder(client)
        .resourcePrefix(properties.getShedlock().getResourcePrefix())
        .keepAlive(properties.getShedlock().isKeepAlive())
        .acquireFence(acquireFence.getIfAvailable())
        .build();
  }
}
