package dev.fencekeeper.client.fakenode;

import static dev.fencekeeper.client.fakenode.Until.until;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.proto.LeaseEvent;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A follower's NOT_LEADER answer, followed by the client. */
class NotLeaderRedirectTest {
  private final FakeCluster cluster = new FakeCluster();
  private final FakeNode follower = FakeNode.start(cluster, "n1");
  private final FakeNode leader = FakeNode.start(cluster, "n2");
  // Told of the follower alone: only the follower's answer can lead it to the leader.
  private final FencingClient client =
      FencingClient.builder()
          .endpoints(follower.address())
          .requestTimeout(Duration.ofMillis(500))
          .callTimeout(Duration.ofSeconds(3))
          .closeTimeout(Duration.ofSeconds(1))
          .build();

  @AfterEach
  void stop() {
    client.close();
    follower.close();
    leader.close();
    cluster.close();
  }

  // Guarantee: a command answered NOT_LEADER goes to the leader the answer names and is applied
  // there once; later calls and the session go straight to the leader.
  @Test
  void aCommandFollowsNotLeaderToTheNamedLeaderAndIsAppliedOnce() {
    follower.notLeader(leader.address());

    Lease lease = client.acquire("r", Duration.ofSeconds(10));

    assertThat(follower.calls("Acquire")).as("asked the follower once").hasSize(1);
    assertThat(leader.calls("Acquire")).as("applied by the leader once").hasSize(1);
    assertThat(cluster.events().stream().filter(e -> e.getType() == LeaseEvent.Type.ACQUIRED))
        .as("one grant")
        .hasSize(1);
    assertThat(cluster.liveToken("r")).isEqualTo(lease.token());

    assertThat(lease.write("k", "v").isAccepted()).isTrue();
    assertThat(follower.calls("Write")).as("the leader is remembered").isEmpty();
    until(
        () -> leader.calls("SessionOpen").size() == 1,
        Duration.ofSeconds(2),
        "the session opened at the leader");
    assertThat(follower.calls("SessionOpen")).isEmpty();
  }
}
