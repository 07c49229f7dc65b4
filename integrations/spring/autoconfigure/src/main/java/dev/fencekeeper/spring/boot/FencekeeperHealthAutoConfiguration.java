package dev.fencekeeper.spring.boot;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.spring.health.FencekeeperHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/** The {@code fencekeeper} health contributor: UP while a node that leads the cluster answers. */
@AutoConfiguration(after = FencekeeperAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(FencingClient.class)
@ConditionalOnEnabledHealthIndicator("fencekeeper")
@EnableConfigurationProperties(FencekeeperProperties.class)
public class FencekeeperHealthAutoConfiguration {

  @Bean(name = "fencekeeperHealthIndicator")
  @ConditionalOnMissingBean(name = "fencekeeperHealthIndicator")
  public FencekeeperHealthIndicator fencekeeperHealthIndicator(
      FencingClient client, FencekeeperProperties properties) {
    return new FencekeeperHealthIndicator(client, properties.getHealth().getTimeout());
  }
}
