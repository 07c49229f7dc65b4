package dev.fencekeeper.client;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * Cluster operations that are Raft's own business rather than the state machine's: membership, moving
 * the leader, snapshots. Failures are thrown as {@link FencingException} with code UNAVAILABLE or
 * INVALID_ARGUMENT and a message naming what failed.
 */
public final class FencingAdmin implements AutoCloseable {
  private final ClusterConfig config;
  private final RaftClient raft;
  private final long timeoutMs;

  private FencingAdmin(ClusterConfig config) {
    this.config = config;
    this.raft = RaftClient.newBuilder().setRaftGroup(config.raftGroup()).setProperties(config.clientProperties()).build();
    this.timeoutMs = Math.max(10_000, config.requestTimeout().multipliedBy(3).toMillis());
  }

  public static FencingAdmin connect(ClusterConfig config) {
    return new FencingAdmin(config);
  }

  /** The voting members in the current (committed or joint) configuration. */
  public List<PeerAddress> members() {
    List<PeerAddress> members = new ArrayList<>();
    for (RaftPeer p : currentPeers()) {
      String[] hostPort = p.getAddress().split(":(?=[0-9]+$)");
      members.add(new PeerAddress(p.getId().toString(), hostPort[0], Integer.parseInt(hostPort[1])));
    }
    return members;
  }

  /**
   * Adds {@code peer}, which must already run (started with {@code server --join}, without a group):
   * the group is created on it, then the configuration grows to include it. Raft's joint consensus keeps
   * the group available throughout; the new member catches up from a snapshot and the log.
   */
  public void addMember(PeerAddress peer) {
    List<RaftPeer> next = new ArrayList<>(currentPeers());
    if (next.stream().anyMatch(p -> p.getId().toString().equals(peer.id()))) {
      throw invalid("member " + peer.id() + " is already in the configuration");
    }
    RaftPeer added = RaftPeer.newBuilder().setId(peer.id()).setAddress(peer.address()).build();
    next.add(added);
    try (RaftClient toNewPeer =
        RaftClient.newBuilder()
            .setRaftGroup(RaftGroup.valueOf(config.groupId(), next))
            .setProperties(config.clientProperties())
            .build()) {
      check(toNewPeer.getGroupManagementApi(added.getId()).add(RaftGroup.valueOf(config.groupId(), next)),
          "creating the group on " + peer.id());
    } catch (IOException e) {
      throw unavailable("cannot reach new member " + peer + ": " + e.getMessage(), e);
    }
    setConfiguration(next, "adding " + peer.id());
  }

  /** Removes member {@code id}; the remaining members must still form a majority that can elect. */
  public void removeMember(String id) {
    List<RaftPeer> next = new ArrayList<>(currentPeers());
    if (!next.removeIf(p -> p.getId().toString().equals(id))) {
      throw invalid("no member " + id + " in the configuration");
    }
    if (next.isEmpty()) {
      throw invalid("cannot remove the last member");
    }
    setConfiguration(next, "removing " + id);
  }

  /** Moves leadership to {@code to}, or (null) asks the leader to step down and lets the others elect. */
  public void transferLeadership(String to) {
    try {
      RaftClientReply reply = raft.admin().transferLeadership(to == null ? null : RaftPeerId.valueOf(to), timeoutMs);
      check(reply, to == null ? "stepping down" : "transferring leadership to " + to);
    } catch (IOException e) {
      throw unavailable("leadership transfer failed: " + e.getMessage(), e);
    }
  }

  /** Takes a snapshot on {@code peerId} now; returns the log index it covers. */
  public long snapshot(String peerId, Duration timeout) {
    try {
      RaftClientReply reply = raft.getSnapshotManagementApi(RaftPeerId.valueOf(peerId)).create(true, timeout.toMillis());
      check(reply, "snapshot on " + peerId);
      return reply.getLogIndex();
    } catch (IOException e) {
      throw unavailable("snapshot on " + peerId + " failed: " + e.getMessage(), e);
    }
  }

  private List<RaftPeer> currentPeers() {
    return new ArrayList<>(groupInfo(anyReachablePeer()).getConf().orElseThrow().getPeersList().stream()
        .map(p -> RaftPeer.newBuilder().setId(p.getId().toStringUtf8()).setAddress(p.getAddress()).build())
        .toList());
  }

  private void setConfiguration(List<RaftPeer> peers, String what) {
    try {
      // The List overload: the array overload of 3.3.0 never sets the servers (RATIS.md, key fact 11).
      check(raft.admin().setConfiguration(peers), what);
    } catch (IOException e) {
      throw unavailable(what + " failed: " + e.getMessage(), e);
    }
  }

  private RaftPeerId anyReachablePeer() {
    IOException last = null;
    for (PeerAddress p : config.peers()) {
      try {
        GroupInfoReply reply = raft.getGroupManagementApi(RaftPeerId.valueOf(p.id())).info(config.groupId());
        if (reply.isSuccess()) {
          return RaftPeerId.valueOf(p.id());
        }
      } catch (IOException e) {
        last = e;
      }
    }
    throw unavailable("no member of " + config.peers() + " answered", last);
  }

  private GroupInfoReply groupInfo(RaftPeerId peer) {
    try {
      return raft.getGroupManagementApi(peer).info(config.groupId());
    } catch (IOException e) {
      throw unavailable("group info from " + peer + " failed: " + e.getMessage(), e);
    }
  }

  private static void check(RaftClientReply reply, String what) {
    if (!reply.isSuccess()) {
      throw unavailable(what + " failed: " + reply.getException(), reply.getException());
    }
  }

  private static FencingException invalid(String message) {
    return new FencingException(new Result(dev.fencekeeper.proto.Response.newBuilder()
        .setCode(dev.fencekeeper.proto.ResultCode.INVALID_ARGUMENT).setMessage(message).build()));
  }

  private static FencingException unavailable(String message, Throwable cause) {
    return new FencingException(new Result(dev.fencekeeper.proto.Response.newBuilder()
        .setCode(dev.fencekeeper.proto.ResultCode.UNAVAILABLE).setMessage(message).build()), cause);
  }

  @Override
  public void close() {
    try {
      raft.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
