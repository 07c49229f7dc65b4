package dev.fencekeeper.spring.boot;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.spring.metrics.FencingClientMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The client's metrics in the application's Micrometer registry (Boot binds every MeterBinder
 * bean).
 */
@AutoConfiguration(after = FencekeeperAutoConfiguration.class)
@ConditionalOnClass(MeterBinder.class)
@ConditionalOnBean(FencingClient.class)
@EnableConfigurationProperties(FencekeeperProperties.class)
public class FencekeeperMetricsAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public FencingClientMetrics fencingClientMetrics(FencingClient client) {
    return new FencingClientMetrics(client.metrics());
  }
}
