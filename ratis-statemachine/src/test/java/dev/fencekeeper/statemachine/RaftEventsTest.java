package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.Limits;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;

/**
 * The follower watch and the cluster-id keeper sleep until Raft gives them work: the state machine
 * passes on Ratis's change of leader and of configuration.
 */
class RaftEventsTest {
  private final FencingStateMachine replica = new FencingStateMachine(Limits.defaults(), () -> 0);
  private final List<String> heard = new CopyOnWriteArrayList<>();

  // Guarantee: a change of leader (to a node or to none) and an applied configuration entry each
  // reach the node's watchers, once.
  @Test
  void leaderAndConfigurationChangesArePassedOn() {
    replica.setRaftEvents(
        new RaftEvents() {
          @Override
          public void leaderChanged() {
            heard.add("leader");
          }

          @Override
          public void configurationChanged() {
            heard.add("configuration");
          }
        });
    RaftGroupMemberId self =
        RaftGroupMemberId.valueOf(RaftPeerId.valueOf("n1"), RaftGroupId.randomId());

    replica.notifyLeaderChanged(self, RaftPeerId.valueOf("n2"));
    replica.notifyConfigurationChanged(2, 7, RaftConfigurationProto.getDefaultInstance());
    replica.notifyLeaderChanged(self, null);

    assertThat(heard).containsExactly("leader", "configuration", "leader");
  }
}
