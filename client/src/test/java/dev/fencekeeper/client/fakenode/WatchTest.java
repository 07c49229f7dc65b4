package dev.fencekeeper.client.fakenode;

import static dev.fencekeeper.client.fakenode.Until.until;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.LeaseEvent;
import dev.fencekeeper.client.Watch;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A watch of one resource through a node that goes away and comes back. */
class WatchTest {
  private final FakeCluster cluster = new FakeCluster();
  private final FakeNode node = FakeNode.start(cluster, "n1");
  private final FencingClient client =
      FencingClient.builder()
          .endpoints(node.address())
          .requestTimeout(Duration.ofMillis(500))
          .closeTimeout(Duration.ofSeconds(1))
          .build();

  @AfterEach
  void stop() {
    client.close();
    node.close();
    cluster.close();
  }

  // Guarantee: a watch delivers each lease event of its resource once, in commit order, and
  // resumes after its node's stream breaks (the node stopped and back) from the last event it
  // delivered: the events committed meanwhile arrive, none twice, none lost.
  @Test
  void aWatchDeliversEachEventOnceThroughABrokenStream() {
    List<LeaseEvent> seen = new CopyOnWriteArrayList<>();
    try (Watch watch = client.watch("r", false, Watch.FROM_NOW, seen::add)) {
      until(() -> !node.calls("Watch").isEmpty(), Duration.ofSeconds(3), "the watch started");
      long first = cluster.grantToOther("r", Duration.ofSeconds(30));
      until(() -> seen.size() == 1, Duration.ofSeconds(3), "the grant seen");

      node.stop();
      cluster.revoke("r");
      long second = cluster.grantToOther("r", Duration.ofSeconds(30));
      node.resume();

      until(() -> seen.size() >= 3, Duration.ofSeconds(5), "the events of the outage seen");
      cluster.release("r");
      until(() -> seen.size() >= 4, Duration.ofSeconds(3), "the release seen");
      assertThat(seen)
          .extracting(LeaseEvent::type, LeaseEvent::token)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(LeaseEvent.Type.ACQUIRED, first),
              org.assertj.core.groups.Tuple.tuple(LeaseEvent.Type.REVOKED, first),
              org.assertj.core.groups.Tuple.tuple(LeaseEvent.Type.ACQUIRED, second),
              org.assertj.core.groups.Tuple.tuple(LeaseEvent.Type.RELEASED, second));
      assertThat(watch.lastIndex()).isEqualTo(cluster.events().get(3).getIndex());
    }
  }

  // Guarantee: a watch whose node is cut off from the leader but still connected (it applies
  // nothing new and raises no error) moves to the leader within seconds and delivers what was
  // committed meanwhile, once the client knows the leader.
  @Test
  void aWatchOnANodeCutOffFromTheLeaderMovesToTheLeader() {
    try (FakeNode leader = FakeNode.start(cluster, "n2")) {
      List<LeaseEvent> seen = new CopyOnWriteArrayList<>();
      try (Watch watch = client.watch("r", false, Watch.FROM_NOW, seen::add)) {
        until(() -> !node.calls("Watch").isEmpty(), Duration.ofSeconds(3), "the watch started");
        cluster.grantToOther("r", Duration.ofSeconds(30));
        until(() -> seen.size() == 1, Duration.ofSeconds(3), "the grant seen");

        node.cutOff(true);
        node.notLeader(leader.address());
        // Any call learns the new leader from the cut-off node's NOT_LEADER answer.
        client.acquire("other", Duration.ofSeconds(30)).close();
        cluster.revoke("r");

        until(() -> seen.size() == 2, Duration.ofSeconds(10), "the revoke seen at the leader");
        assertThat(seen.get(1).type()).isEqualTo(LeaseEvent.Type.REVOKED);
        assertThat(leader.calls("Watch")).as("the watch re-opened at the leader").isNotEmpty();
      }
    }
  }
}
