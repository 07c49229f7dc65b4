package dev.fencekeeper.clientport;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.metrics.FollowerLag;
import dev.fencekeeper.metrics.StateMachineMetrics;
import dev.fencekeeper.proto.AddMemberRequest;
import dev.fencekeeper.proto.JoinGroupRequest;
import dev.fencekeeper.proto.Member;
import dev.fencekeeper.proto.MembersRequest;
import dev.fencekeeper.proto.Membership;
import dev.fencekeeper.proto.RemoveMemberRequest;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.SnapshotRequest;
import dev.fencekeeper.proto.TransferLeadershipRequest;
import dev.fencekeeper.statemachine.WireCodec;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.exceptions.AlreadyExistsException;
import org.apache.ratis.server.RaftConfiguration;
import org.apache.ratis.server.RaftServer;

/**
 * The client protocol's admin calls on one node (docs/protocol.md, Admin): the Raft group's
 * membership, leadership and snapshots, asked of this node's own Raft server in-process, as Ratis's
 * admin service would hand them over, without a Ratis client. Who may (an identity in {@code
 * authz.admins} for anything that changes something), and what makes no sense, are answered here
 * before Raft is asked ({@link AdminRules}); a call only the leader serves is answered NOT_LEADER
 * elsewhere, naming the leader, as every other call is.
 */
final class AdminCalls {
  /** How long a leadership transfer or a snapshot may take when the request names no time. */
  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

  private final LocalRaft raft;
  private final Redirects redirects;
  private final Security security;
  private final StateMachineMetrics metrics;
  private final Supplier<List<FollowerLag>> followers;
  private final Duration maxFollowerLag;
  private final String clientAddress;

  AdminCalls(
      LocalRaft raft,
      Redirects redirects,
      Security security,
      StateMachineMetrics metrics,
      Duration maxFollowerLag,
      String clientAddress) {
    this.raft = raft;
    this.redirects = redirects;
    this.security = security;
    this.metrics = metrics;
    this.followers = metrics::followers;
    this.maxFollowerLag = maxFollowerLag;
    this.clientAddress = clientAddress;
  }

  /** The configuration as this node sees it; any node answers. */
  Response members(MembersRequest request) {
    try {
      RaftServer.Division d = raft.division();
      return Response.newBuilder()
          .setCode(ResultCode.FOUND)
          .setMembership(membership(d))
          .setLeaderId(raft.leadership().leaderId())
          .setLeaderAddress(redirects.leaderAddress())
          .build();
    } catch (IOException e) {
      return notInGroup();
    }
  }

  CompletableFuture<Response> addMember(AddMemberRequest request, String caller) {
    Response refused = refusedChange("add a member", caller);
    if (refused != null) {
      return done(refused);
    }
    RaftConfiguration conf;
    try {
      conf = raft.division().getRaftConf();
    } catch (IOException e) {
      return done(notInGroup());
    }
    Response invalid = AdminRules.whyNotAdd(members(conf), request.getId(), request.getAddress());
    if (invalid == null) {
      invalid =
          AdminRules.whyNotClientAddress(
              request.getId(), request.getAddress(), request.getClientAddress());
    }
    if (invalid != null) {
      return done(invalid);
    }
    // The members as they are, client addresses they were added with included.
    List<RaftPeer> next = new ArrayList<>(conf.getCurrentPeers());
    next.add(raftPeer(request.getId(), request.getAddress(), request.getClientAddress()));
    return changed(raft.setConfiguration(next), "adding " + request.getId());
  }

  CompletableFuture<Response> removeMember(RemoveMemberRequest request, String caller) {
    Response refused = refusedChange("remove a member", caller);
    if (refused != null) {
      return done(refused);
    }
    RaftConfiguration conf;
    try {
      conf = raft.division().getRaftConf();
    } catch (IOException e) {
      return done(notInGroup());
    }
    Response invalid = AdminRules.whyNotRemove(members(conf), request.getId(), raft.selfId());
    if (invalid != null) {
      return done(invalid);
    }
    List<RaftPeer> next =
        conf.getCurrentPeers().stream()
            .filter(p -> !p.getId().toString().equals(request.getId()))
            .toList();
    return changed(raft.setConfiguration(next), "removing " + request.getId());
  }

  CompletableFuture<Response> transferLeadership(TransferLeadershipRequest request, String caller) {
    Response refused = refusedChange("transfer leadership", caller);
    if (refused != null) {
      return done(refused);
    }
    String to = request.getTo().isEmpty() ? null : request.getTo();
    List<PeerAddress> current;
    try {
      current = members(raft.division().getRaftConf());
    } catch (IOException e) {
      return done(notInGroup());
    }
    Response invalid = AdminRules.whyNotTransfer(current, to, followers.get(), maxFollowerLag);
    if (invalid != null) {
      return done(invalid);
    }
    if (raft.selfId().equals(to)) {
      return done(withMembership(Response.newBuilder().setCode(ResultCode.ACCEPTED)));
    }
    String what = to == null ? "stepping down" : "transferring leadership to " + to;
    return changed(raft.transferLeadership(to, timeoutMs(request.getTimeoutMs())), what);
  }

  /** Takes a snapshot on this node, leader or not. */
  CompletableFuture<Response> snapshot(SnapshotRequest request, String caller) {
    if (!security.isAdmin(caller)) {
      return done(denied("take a snapshot", caller));
    }
    return raft.snapshot(timeoutMs(request.getTimeoutMs()))
        .handle(
            (reply, error) -> {
              Throwable failure = failure(reply, error);
              if (failure != null) {
                return unavailable(
                    "snapshot on " + raft.selfId() + " failed: " + describe(failure));
              }
              return Response.newBuilder()
                  .setCode(ResultCode.ACCEPTED)
                  .setSnapshotIndex(reply.getLogIndex())
                  .build();
            });
  }

  /**
   * Creates the group on this node, started to join, with the configuration it will be added to.
   */
  CompletableFuture<Response> joinGroup(JoinGroupRequest request, String caller) {
    if (!security.isAdmin(caller)) {
      return done(denied("join this node to the group", caller));
    }
    List<PeerAddress> members = new ArrayList<>();
    List<RaftPeer> peers = new ArrayList<>();
    for (Member m : request.getMembersList()) {
      try {
        members.add(PeerAddress.parse(m.getId() + "@" + m.getAddress()));
        Response invalid =
            AdminRules.whyNotClientAddress(m.getId(), m.getAddress(), m.getClientAddress());
        if (invalid != null) {
          return done(invalid);
        }
        peers.add(raftPeer(m.getId(), m.getAddress(), m.getClientAddress()));
      } catch (ConfigException e) {
        return done(
            WireCodec.invalid(
                "members: '"
                    + m.getId()
                    + "@"
                    + m.getAddress()
                    + "' is not valid: "
                    + e.getMessage()));
      }
    }
    if (members.stream().noneMatch(m -> m.id().equals(raft.selfId()))) {
      return done(
          WireCodec.invalid(
              "members: node "
                  + raft.selfId()
                  + " is not among them ("
                  + AdminRules.peersOf(members)
                  + "); list the configuration as it will be once it is added"));
    }
    return raft.joinGroup(peers)
        .handle(
            (reply, error) -> {
              Throwable failure = failure(reply, error);
              if (failure != null && !(failure instanceof AlreadyExistsException)) {
                return unavailable(
                    "creating the group on " + raft.selfId() + " failed: " + describe(failure));
              }
              return Response.newBuilder().setCode(ResultCode.ACCEPTED).build();
            });
  }

  // ---------------------------------------------------------------------------------------------

  /** Why this node refuses a change: a caller not in authz.admins, or not the ready leader. */
  private Response refusedChange(String operation, String caller) {
    if (!security.isAdmin(caller)) {
      return denied(operation, caller);
    }
    if (!raft.leadership().leaderReady()) {
      return redirects.notLeader();
    }
    return null;
  }

  private Response denied(String operation, String caller) {
    String message =
        "identity '" + caller + "' may not " + operation + ": it is not in authz.admins";
    metrics.denied(operation, caller, message);
    return Response.newBuilder().setCode(ResultCode.PERMISSION_DENIED).setMessage(message).build();
  }

  /** ACCEPTED with the configuration after {@code raft}'s reply, or UNAVAILABLE saying why not. */
  private CompletableFuture<Response> changed(
      CompletableFuture<RaftClientReply> raftReply, String what) {
    return raftReply.handle(
        (reply, error) -> {
          Throwable failure = failure(reply, error);
          if (failure != null) {
            return unavailable(what + " failed: " + describe(failure));
          }
          return withMembership(Response.newBuilder().setCode(ResultCode.ACCEPTED));
        });
  }

  private Response withMembership(Response.Builder b) {
    try {
      b.setMembership(membership(raft.division()));
    } catch (IOException e) {
      // The change was made; this node's view of it is just not available (it left the group).
    }
    return b.build();
  }

  private Membership membership(RaftServer.Division d) {
    RaftConfiguration conf = d.getRaftConf();
    Membership.Builder m =
        Membership.newBuilder()
            .setLeaderId(raft.leadership().leaderId())
            .setReportedBy(raft.selfId())
            .setChanging(!conf.getPreviousPeers().isEmpty());
    for (RaftPeer p : conf.getCurrentPeers()) {
      String id = p.getId().toString();
      m.addMembers(
          Member.newBuilder()
              .setId(id)
              .setAddress(p.getAddress())
              .setClientAddress(
                  id.equals(raft.selfId()) ? clientAddress : redirects.clientAddressOf(id)));
    }
    return m.build();
  }

  private static List<PeerAddress> members(RaftConfiguration conf) {
    List<PeerAddress> members = new ArrayList<>();
    for (RaftPeer p : conf.getCurrentPeers()) {
      try {
        members.add(PeerAddress.parse(p.getId() + "@" + p.getAddress()));
      } catch (ConfigException e) {
        // Every member was added through these checks or a node's peers; none is unreadable.
        throw new IllegalStateException("member " + p + " has an unreadable address", e);
      }
    }
    return members;
  }

  /**
   * A member as the Raft configuration holds it: its Raft address and, when given, the client
   * address it was added with (Ratis's own field for where a peer's clients connect), so every node
   * reports the same client address for it.
   */
  static RaftPeer raftPeer(String id, String address, String clientAddress) {
    RaftPeer.Builder b = RaftPeer.newBuilder().setId(id).setAddress(address);
    if (!clientAddress.isEmpty()) {
      b.setClientAddress(clientAddress);
    }
    return b.build();
  }

  /** The client address {@code peer} was added with; empty when none was recorded. */
  static String recordedClientAddress(RaftPeer peer) {
    String recorded = peer == null ? null : peer.getClientAddress();
    return recorded == null ? "" : recorded;
  }

  /** The client address a member has by the default rule; empty when it has none. */
  static String byRule(String id, String raftAddress) {
    try {
      return new PeerAddress(
              id,
              PeerAddress.parse(id + "@" + raftAddress).host(),
              ClusterConfig.defaultClientPort(PeerAddress.parse(id + "@" + raftAddress)))
          .address();
    } catch (ConfigException e) {
      return "";
    }
  }

  private Response notInGroup() {
    return unavailable(
        "node " + raft.selfId() + " runs no group yet (started with --join and not yet added)");
  }

  private static long timeoutMs(long requested) {
    return requested > 0 ? requested : DEFAULT_TIMEOUT.toMillis();
  }

  private static Throwable failure(RaftClientReply reply, Throwable error) {
    if (error != null) {
      return error instanceof CompletionException && error.getCause() != null
          ? error.getCause()
          : error;
    }
    if (reply.isSuccess()) {
      return null;
    }
    return reply.getException() != null
        ? reply.getException()
        : new IOException("Raft refused without saying why");
  }

  private static String describe(Throwable t) {
    return t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
  }

  private static Response unavailable(String message) {
    return Response.newBuilder().setCode(ResultCode.UNAVAILABLE).setMessage(message).build();
  }

  private static CompletableFuture<Response> done(Response response) {
    return CompletableFuture.completedFuture(response);
  }
}
