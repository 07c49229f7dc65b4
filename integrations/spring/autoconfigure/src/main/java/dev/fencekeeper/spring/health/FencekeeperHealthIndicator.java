package dev.fencekeeper.spring.health;

import dev.fencekeeper.client.FencingClient;
import java.time.Duration;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The {@code fencekeeper} health contributor on Spring Boot 4: UP when a node that says it leads
 * the cluster answers within the timeout (only a leader grants leases and accepts fenced writes),
 * DOWN otherwise, with {@code state} telling "no leader" ({@code NO_LEADER}) from "no node
 * reachable" ({@code UNREACHABLE}). Every node is asked at once, so a check takes at most the
 * timeout. {@link FencekeeperBoot3HealthIndicator} is the same check on Spring Boot 3.
 */
public class FencekeeperHealthIndicator extends AbstractHealthIndicator implements AutoCloseable {
  private final ClusterHealthCheck check;

  public FencekeeperHealthIndicator(FencingClient client, Duration timeout) {
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
