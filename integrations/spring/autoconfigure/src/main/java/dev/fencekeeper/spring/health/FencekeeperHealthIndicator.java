package dev.fencekeeper.spring.health;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.NodeStatus;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.ratis.protocol.RaftPeer;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * UP when a node that says it leads the cluster answers within the timeout: only a leader grants
 * leases and accepts fenced writes, so a reachable follower alone is DOWN. Asks the nodes one at a
 * time and stops at the leader; the details name it, its term, and what every node asked said.
 */
public class FencekeeperHealthIndicator extends AbstractHealthIndicator {
  private final FencingClient client;
  private final Duration timeout;

  public FencekeeperHealthIndicator(FencingClient client, Duration timeout) {
    super("fencekeeper health check failed");
    this.client = client;
    this.timeout = timeout;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    Map<String, String> nodes = new LinkedHashMap<>();
    for (RaftPeer peer : client.config().raftPeers()) {
      String id = peer.getId().toString();
      NodeStatus info;
      try {
        info = client.nodeStatus(id, timeout);
      } catch (RuntimeException e) {
        nodes.put(id, "unreachable at " + peer.getAddress() + ": " + e.getMessage());
        continue;
      }
      nodes.put(id, info.role() + " term " + info.term());
      if (info.isLeader()) {
        builder
            .up()
            .withDetail("leader", id)
            .withDetail("address", peer.getAddress())
            .withDetail("term", info.term())
            .withDetail("nodes", nodes);
        return;
      }
    }
    builder
        .down()
        .withDetail("reason", "no node that leads the cluster answered within " + timeout)
        .withDetail("nodes", nodes);
  }
}
