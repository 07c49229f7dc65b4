package dev.fencekeeper.clientport;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.metrics.FollowerLag;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class AdminRulesTest {
  private static final List<PeerAddress> THREE =
      List.of(
          new PeerAddress("n1", "10.0.0.1", 7301),
          new PeerAddress("n2", "10.0.0.2", 7301),
          new PeerAddress("n3", "10.0.0.3", 7301));
  private static final Duration BOUND = Duration.ofSeconds(10);

  // Guarantee: only a transfer naming a follower the leader counts as lagging is refused
  // (UNAVAILABLE), with words that name it and its lag; one to a follower that keeps up, or a
  // step-down (no new leader) passes; one to a non-member is NOT_FOUND.
  @Test
  void refusesATransferToALaggingFollowerOrANonMember() {
    List<FollowerLag> view =
        List.of(
            new FollowerLag("n2", 100, 0, 0.0, false), new FollowerLag("n3", 40, 63, 12.4, true));

    Response lagging = AdminRules.whyNotTransfer(THREE, "n3", view, BOUND);
    assertThat(lagging.getCode()).isEqualTo(ResultCode.UNAVAILABLE);
    assertThat(lagging.getMessage())
        .startsWith("refusing to transfer leadership to n3: it lags, 63 entries behind")
        .contains("12.4s");
    assertThat(AdminRules.whyNotTransfer(THREE, "n2", view, BOUND)).isNull();
    assertThat(AdminRules.whyNotTransfer(THREE, null, view, BOUND)).isNull();
    assertThat(AdminRules.whyNotTransfer(THREE, "n9", view, BOUND).getCode())
        .isEqualTo(ResultCode.NOT_FOUND);
  }

  // Guarantee: an add is refused (INVALID_ARGUMENT, naming why) for a malformed member, an id or a
  // Raft address already in the configuration; a new member passes.
  @Test
  void refusesAnAddThatMakesNoSense() {
    assertThat(AdminRules.whyNotAdd(THREE, "n4", "10.0.0.4:7301")).isNull();
    Response sameId = AdminRules.whyNotAdd(THREE, "n2", "10.0.0.4:7301");
    assertThat(sameId.getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(sameId.getMessage()).contains("n2 is already in the configuration");
    Response sameAddress = AdminRules.whyNotAdd(THREE, "n4", "10.0.0.2:7301");
    assertThat(sameAddress.getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(sameAddress.getMessage()).contains("already the address of member n2");
    assertThat(AdminRules.whyNotAdd(THREE, "n4", "no-port").getCode())
        .isEqualTo(ResultCode.INVALID_ARGUMENT);
  }

  // Guarantee: a new member's client address, when given, is a host:port other than its Raft
  // address; none given passes (the default rule applies).
  @Test
  void refusesAClientAddressThatIsNone() {
    assertThat(AdminRules.whyNotClientAddress("n4", "10.0.0.4:7301", "")).isNull();
    assertThat(AdminRules.whyNotClientAddress("n4", "10.0.0.4:7301", "10.0.0.4:9000")).isNull();
    Response raftPort = AdminRules.whyNotClientAddress("n4", "10.0.0.4:7301", "10.0.0.4:7301");
    assertThat(raftPort.getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(raftPort.getMessage()).contains("is its Raft address");
    Response noPort = AdminRules.whyNotClientAddress("n4", "10.0.0.4:7301", "10.0.0.4");
    assertThat(noPort.getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(noPort.getMessage()).contains("client address of n4: '10.0.0.4'");
  }

  // Guarantee: a remove is refused for a non-member (NOT_FOUND), the last member and the leader
  // itself (INVALID_ARGUMENT: leadership moves first); a follower passes.
  @Test
  void refusesARemoveOfTheLeaderTheLastOrANonMember() {
    assertThat(AdminRules.whyNotRemove(THREE, "n2", "n1")).isNull();
    assertThat(AdminRules.whyNotRemove(THREE, "n9", "n1").getCode())
        .isEqualTo(ResultCode.NOT_FOUND);
    Response leader = AdminRules.whyNotRemove(THREE, "n1", "n1");
    assertThat(leader.getCode()).isEqualTo(ResultCode.INVALID_ARGUMENT);
    assertThat(leader.getMessage()).contains("move leadership");
    assertThat(AdminRules.whyNotRemove(THREE.subList(0, 1), "n1", "n2").getMessage())
        .contains("last member");
  }
}
