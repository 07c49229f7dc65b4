package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.metrics.FollowerLag;
import java.time.Duration;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.proto.RaftProtos.TransferLeadershipRequestProto;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

class LaggingTransferGuardTest {
  private static TransferLeadershipRequestProto to(String id) {
    return TransferLeadershipRequestProto.newBuilder()
        .setNewLeader(RaftPeerProto.newBuilder().setId(ByteString.copyFromUtf8(id)))
        .build();
  }

  // Guarantee: only a transfer naming a follower the leader counts as lagging is refused, with
  // words that name it and its lag; one to a follower that keeps up, to an unknown member, or a
  // step-down (no new leader) passes.
  @Test
  void refusesOnlyATransferToALaggingFollower() {
    List<FollowerLag> view =
        List.of(
            new FollowerLag("n2", 100, 0, 0.0, false), new FollowerLag("n3", 40, 63, 12.4, true));
    Duration bound = Duration.ofSeconds(10);

    assertThat(LaggingTransferGuard.refusal(to("n3"), view, bound))
        .startsWith("refusing to transfer leadership to n3: it lags, 63 entries behind")
        .contains("12.4s");
    assertThat(LaggingTransferGuard.refusal(to("n2"), view, bound)).isNull();
    assertThat(LaggingTransferGuard.refusal(to("n9"), view, bound)).isNull();
    assertThat(
            LaggingTransferGuard.refusal(
                TransferLeadershipRequestProto.getDefaultInstance(), view, bound))
        .isNull();
  }
}
