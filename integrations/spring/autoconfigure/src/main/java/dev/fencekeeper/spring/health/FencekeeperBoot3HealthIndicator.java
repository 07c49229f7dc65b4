package dev.fencekeeper.spring.health;

import dev.fencekeeper.client.FencingClient;
import java.time.Duration;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The {@code fencekeeper} health contributor on Spring Boot 3 (Actuator's {@code
 * org.springframework.boot.actuate.health} API): the same check, states and details as {@link
 * FencekeeperHealthIndicator} on Spring Boot 4.
 */
public class FencekeeperBoot3HealthIndicator extends AbstractHealthIndicator
    implements AutoCloseable {
  private final ClusterHealthCheck check;

  public FencekeeperBoot3HealthIndicator(FencingClient client, Duration timeout) {
    super("fencekeeper health check failed");
    this.check = new ClusterHealthCheck(client, timeout);
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    ClusterHealth health = check.check();
    (health.isUp() ? builder.up() : builder.down()).withDetails(health.details());
  }

  @Override
  public void close() {
    check.close();
  }
}
