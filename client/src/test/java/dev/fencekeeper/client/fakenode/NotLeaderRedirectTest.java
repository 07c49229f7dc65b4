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
  // there once; later calls go straight to the leader, and the session ends up there. (The session
  // is opened as the first acquire is sent, before any answer has named the leader, so that open
  // may reach the follower first.)
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
    assertThat(follower.calls("SessionOpen"))
        .as("only the open sent with the first acquire, before the leader was known")
        .hasSizeLessThanOrEqualTo(1);
  }

  // Guarantee: when the leader steps down and ends the session NOT_LEADER naming the new leader,
  // the session re-opens there and its lease stays held through TTL after TTL.
  @Test
  void aSessionEndedNotLeaderMovesToTheNamedLeaderAndKeepsItsLease() throws InterruptedException {
    leader.notLeader(null);
    follower.notLeader(null); // the follower leads first: it is the one address the client knows
    Lease lease = client.acquire("r", Duration.ofMillis(1_200));
    until(
        () -> follower.calls("SessionOpen").size() == 1,
        Duration.ofSeconds(2),
        "the session opened at the first leader");

    follower.stepDown(leader.address());

    until(
        () -> leader.calls("SessionOpen").size() == 1,
        Duration.ofSeconds(2),
        "the session re-opened at the new leader");
    Thread.sleep(2_500); // two TTLs: only keep-alives at the new leader can have renewed it
    assertThat(lease.isValid()).isTrue();
    assertThat(cluster.liveToken("r")).isEqualTo(lease.token());
    assertThat(leader.calls("KeepAlive")).isNotEmpty();
  }
}
