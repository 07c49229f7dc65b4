package dev.fencekeeper.client.fakenode;

import static dev.fencekeeper.client.fakenode.Until.until;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.config.LocalPorts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The session re-opened after a leader kill, in miniature: one endpoint is a dead node (its port
 * refuses connections, as a killed leader's does), the other is alive. Every time the stream breaks
 * the client tries whichever node comes next, the dead one about half the time.
 */
@Timeout(60)
class SessionReopenPastDeadNodeTest {
  private static final int BREAKS = 30;
  // A re-open takes a refused dial and a back-off of at most 100 ms before the live node; the
  // open timeout, which a lost refusal would cost, is at least a second.
  private static final Duration REOPEN_WITHIN = Duration.ofMillis(700);

  private final FakeCluster cluster = new FakeCluster();
  private final FakeNode node = FakeNode.start(cluster, "n1");
  private final String dead = "127.0.0.1:" + LocalPorts.freePort();
  private final FencingClient client =
      FencingClient.builder()
          .endpoints(dead + "," + node.address())
          .requestTimeout(Duration.ofSeconds(3))
          .closeTimeout(Duration.ofSeconds(1))
          .build();

  @AfterEach
  void stop() {
    client.close();
    node.close();
    cluster.close();
  }

  // Guarantee: a dead node refusing the session's dial sends the session on to the next node at
  // once; the refusal is never lost, which would leave the session waiting out its open timeout
  // (a second and a half for a 3 s lease, half the lease) with no node renewing it.
  @Test
  void aRefusedDialIsFollowedByTheNextNodeAtOnce() throws InterruptedException {
    Lease lease = client.acquire("r", Duration.ofSeconds(3));
    until(() -> node.calls("SessionOpen").size() == 1, Duration.ofSeconds(5), "a session opened");

    List<Long> slow = new ArrayList<>();
    for (int i = 0; i < BREAKS; i++) {
      int opens = node.calls("SessionOpen").size();
      long broke = System.nanoTime();
      node.breakSessions();
      until(
          () -> node.calls("SessionOpen").size() > opens,
          Duration.ofSeconds(10),
          "the session re-opened at the live node");
      long ms = (System.nanoTime() - broke) / 1_000_000;
      if (ms > REOPEN_WITHIN.toMillis()) {
        slow.add(ms);
      }
    }
    assertThat(slow).as("re-opens slower than %s (ms)", REOPEN_WITHIN).isEmpty();
    assertThat(lease.isValid()).isTrue();
  }
}
