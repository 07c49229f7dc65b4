package dev.fencekeeper.spring.boot;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.spring.health.FencekeeperBoot3HealthIndicator;
import dev.fencekeeper.spring.health.FencekeeperHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code fencekeeper} health contributor: UP while a node that leads the cluster answers.
 * Spring Boot 4 keeps health in {@code org.springframework.boot.health}, Spring Boot 3 in
 * Actuator's {@code org.springframework.boot.actuate.health}; one nested configuration per line,
 * each matched by class name only, so neither line loads the other's types.
 */
@AutoConfiguration(after = FencekeeperAutoConfiguration.class)
@ConditionalOnBean(FencingClient.class)
@EnableConfigurationProperties(FencekeeperProperties.class)
public class FencekeeperHealthAutoConfiguration {
  static final String BOOT4_HEALTH = "org.springframework.boot.health.contributor.HealthIndicator";
  static final String BOOT3_HEALTH = "org.springframework.boot.actuate.health.HealthIndicator";

  /** Spring Boot 4 ({@code spring-boot-health}). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = BOOT4_HEALTH)
  @org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator(
      "fencekeeper")
  static class Boot4 {
    @Bean(name = "fencekeeperHealthIndicator")
    @ConditionalOnMissingBean(name = "fencekeeperHealthIndicator")
    FencekeeperHealthIndicator fencekeeperHealthIndicator(
        FencingClient client, FencekeeperProperties properties) {
      return new FencekeeperHealthIndicator(client, properties.getHealth().getTimeout());
    }
  }

  /** Spring Boot 3 ({@code spring-boot-actuator}); never when Spring Boot 4's health is present. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = BOOT3_HEALTH)
  @ConditionalOnMissingClass(BOOT4_HEALTH)
  @org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator(
      "fencekeeper")
  static class Boot3 {
    @Bean(name = "fencekeeperHealthIndicator")
    @ConditionalOnMissingBean(name = "fencekeeperHealthIndicator")
    FencekeeperBoot3HealthIndicator fencekeeperHealthIndicator(
        FencingClient client, FencekeeperProperties properties) {
      return new FencekeeperBoot3HealthIndicator(client, properties.getHealth().getTimeout());
    }
  }
}
