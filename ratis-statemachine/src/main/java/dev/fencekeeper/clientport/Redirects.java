package dev.fencekeeper.clientport;

import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.statemachine.LeaderAnnouncement;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * Where a node sends a client that asked it for what only the leader answers: the leader's id, as
 * Ratis knows it, and its client address, as the leader announced it in its takeover entry for the
 * current term; until this node has applied that entry, the address the default rule gives the
 * leader's id ({@code ClusterConfig.clientAddresses}).
 */
final class Redirects {
  private final LocalRaft raft;
  private final Supplier<LeaderAnnouncement> announced;
  private final Map<String, String> byRule;

  Redirects(
      LocalRaft raft, Supplier<LeaderAnnouncement> announced, List<PeerAddress> clientAddresses) {
    this.raft = raft;
    this.announced = announced;
    this.byRule =
        clientAddresses.stream()
            .collect(Collectors.toUnmodifiableMap(PeerAddress::id, PeerAddress::address));
  }

  /** NOT_LEADER, naming the leader when this node knows one. Nothing was changed. */
  Response notLeader() {
    return redirect(ResultCode.NOT_LEADER, "only the leader answers this").build();
  }

  /**
   * {@code code} (NOT_LEADER, or UNAVAILABLE for a command whose fate leadership left open) with
   * {@code why} and the leader's id and client address when known.
   */
  Response.Builder redirect(ResultCode code, String why) {
    LocalRaft.Leadership now = raft.leadership();
    Response.Builder b = Response.newBuilder().setCode(code);
    String leader = now.leaderId();
    if (now.leader() && !now.leaderReady()) {
      return b.setMessage(
              why
                  + "; node "
                  + raft.selfId()
                  + " has just been elected and is not ready yet: retry here shortly")
          .setLeaderId(leader)
          .setLeaderAddress(addressOf(leader, now.term()));
    }
    if (leader.isEmpty() || leader.equals(raft.selfId())) {
      return b.setMessage(
          why + "; node " + raft.selfId() + " knows no leader now (an election is under way?)");
    }
    String address = addressOf(leader, now.term());
    return b.setMessage(
            why + "; node " + raft.selfId() + " is not the leader: " + leader + " at " + address)
        .setLeaderId(leader)
        .setLeaderAddress(address);
  }

  /** The leader's client address as this node knows it; empty when it knows no leader. */
  String leaderAddress() {
    LocalRaft.Leadership now = raft.leadership();
    return now.leaderId().isEmpty() ? "" : addressOf(now.leaderId(), now.term());
  }

  /**
   * Member {@code id}'s client address: the leader's as it announced it, any other's by the default
   * rule; empty when this node cannot tell.
   */
  String clientAddressOf(String id) {
    LocalRaft.Leadership now = raft.leadership();
    return id.equals(now.leaderId()) ? addressOf(id, now.term()) : byRule(id);
  }

  private String addressOf(String leaderId, long term) {
    LeaderAnnouncement a = announced.get();
    if (a.term() == term && !a.clientAddress().isEmpty()) {
      return a.clientAddress();
    }
    return byRule(leaderId);
  }

  /**
   * Member {@code id}'s client address when it is not the leader: the one it was added with (kept
   * in the Raft configuration), else by the default rule from the configured peers, else (a member
   * added later) from its Raft address in the configuration this node holds.
   */
  private String byRule(String id) {
    RaftPeer peer;
    try {
      peer = raft.division().getRaftConf().getPeer(RaftPeerId.valueOf(id));
    } catch (IOException | RuntimeException e) {
      peer = null;
    }
    String recorded = AdminCalls.recordedClientAddress(peer);
    if (!recorded.isEmpty()) {
      return recorded;
    }
    String configured = byRule.get(id);
    if (configured != null) {
      return configured;
    }
    return peer == null ? "" : AdminCalls.byRule(id, peer.getAddress());
  }
}
