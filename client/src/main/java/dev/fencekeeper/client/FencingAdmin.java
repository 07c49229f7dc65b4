package dev.fencekeeper.client;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyExistsException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.util.TimeDuration;

/**
 * Cluster operations that are Raft's own business rather than the state machine's: membership,
 * moving the leader, snapshots. Failures are thrown as {@link FencingException} whose code says
 * what kind: UNAVAILABLE (no member answered, or Raft refused or timed out), NOT_FOUND (no such
 * member) or INVALID_ARGUMENT (the change makes no sense), with a message naming what failed.
 *
 * <p>The configured peers are only where to start: every operation first asks them for the group's
 * current configuration (preferring the leader's view) and then talks to the members it names, with
 * the ids and addresses Raft itself holds. So an admin pointed at the three original nodes still
 * reaches members added later, and a {@code host:port} peers list whose assigned ids differ from
 * the real ones does no harm.
 */
public final class FencingAdmin implements AutoCloseable {
  /**
   * How long an admin call may take on the cluster's side (catch-up of a new member, an election).
   */
  private static final Duration ADMIN_CALL_TIMEOUT = Duration.ofSeconds(30);

  private static final Duration LEADER_WAIT = Duration.ofSeconds(15);
  private static final Duration TRANSFER_SETTLE = Duration.ofSeconds(5);
  private static final int TRANSFER_ATTEMPTS = 3;
  private static final long POLL_MS = 100;

  private final ClusterConfig config;
  private final long timeoutMs;

  /** The group's configuration as one member reported it. */
  public record Membership(
      List<PeerAddress> members, String leaderId, String reportedBy, boolean changing) {
    /** The membership as reported; the list is copied. */
    public Membership {
      members = List.copyOf(members);
    }

    /** The member with id {@code id}, if it is one. */
    public Optional<PeerAddress> member(String id) {
      return members.stream().filter(m -> m.id().equals(id)).findFirst();
    }

    /** The {@code peers=} value of a node properties file for this membership. */
    public String peersProperty() {
      return String.join(",", members.stream().map(PeerAddress::toString).toList());
    }
  }

  private FencingAdmin(ClusterConfig config) {
    this.config = config;
    this.timeoutMs = Math.max(10_000, config.requestTimeout().multipliedBy(3).toMillis());
  }

  /** An admin handle for the cluster described by {@code config}; nodes are contacted lazily. */
  public static FencingAdmin connect(ClusterConfig config) {
    return new FencingAdmin(config);
  }

  // -----------------------------------------------------------------------------------------------
  // Membership

  /**
   * The voting members in the current (committed or joint) configuration, as the leader sees them.
   */
  public List<PeerAddress> members() {
    return membership().members();
  }

  /**
   * The group's membership: asks the configured peers in order until one answers, then, when that
   * one names a leader other than itself, asks the leader (whose view is authoritative) as well.
   */
  public Membership membership() {
    List<RaftPeer> start = config.raftPeers();
    Answer first = null;
    String failures = "";
    for (RaftPeer peer : start) {
      try {
        first = ask(start, peer.getId());
        break;
      } catch (FencingException e) {
        failures += "\n  " + peer.getId() + " (" + peer.getAddress() + "): " + e.result().message();
      }
    }
    if (first == null) {
      throw AdminFailures.unavailable("no member of the cluster answered:" + failures, null);
    }
    String leader = first.membership.leaderId();
    if (leader.isEmpty() || leader.equals(first.membership.reportedBy())) {
      return first.membership;
    }
    List<RaftPeer> known = raftPeers(first.membership.members());
    if (known.stream().noneMatch(p -> p.getId().toString().equals(leader))) {
      return first.membership;
    }
    try {
      return ask(known, RaftPeerId.valueOf(leader)).membership;
    } catch (FencingException e) {
      return first
          .membership; // the leader moved or is unreachable right now; a member's view will do
    }
  }

  /**
   * Adds {@code peer}, which must already run without the group ({@code fencekeeper server
   * --join}): the group is created on it with the new configuration, then the configuration grows
   * to include it. Raft's joint consensus keeps the group available throughout; the leader first
   * lets the new member catch up (from a snapshot and the log) before it counts towards the
   * majority. Returns the new membership.
   */
  public Membership addMember(PeerAddress peer) {
    Membership current = membership();
    if (current.member(peer.id()).isPresent()) {
      throw AdminFailures.invalid(
          "member "
              + peer.id()
              + " is already in the configuration ("
              + current.peersProperty()
              + ")");
    }
    for (PeerAddress m : current.members()) {
      if (m.address().equalsIgnoreCase(peer.address())) {
        throw AdminFailures.invalid(peer.address() + " is already the address of member " + m.id());
      }
    }
    List<PeerAddress> next = new ArrayList<>(current.members());
    next.add(peer);
    RaftGroup group = RaftGroup.valueOf(config.groupId(), raftPeers(next));
    try (RaftClient toNewPeer =
        client(raftPeers(next), null, RetryPolicies.noRetry(), adminCallTimeout())) {
      RaftClientReply reply =
          toNewPeer.getGroupManagementApi(RaftPeerId.valueOf(peer.id())).add(group);
      if (!reply.isSuccess()) {
        throw AdminFailures.unavailable(
            "creating the group on " + peer + " failed: " + reply.getException(),
            reply.getException());
      }
      // AlreadyExists: an earlier attempt got this far (or the node recovered the group from its
      // storage).
    } catch (AlreadyExistsException e) {
      // As above.
    } catch (IOException | RuntimeException e) {
      if (e instanceof FencingException f) {
        throw f;
      }
      throw AdminFailures.unavailable(
          "cannot reach new member "
              + peer
              + " (is it running with `server --join`?): "
              + AdminFailures.describe(e),
          e);
    }
    setConfiguration(current, next, "adding " + peer.id());
    return awaitMembership(next);
  }

  /**
   * Removes member {@code id}; the remaining members must still form a majority that can elect. The
   * removed node keeps running until it is stopped, but no longer takes part. Returns the new
   * membership.
   */
  public Membership removeMember(String id) {
    Membership current = membership();
    if (current.member(id).isEmpty()) {
      throw AdminFailures.notFound(
          "no member " + id + " in the configuration (" + current.peersProperty() + ")");
    }
    List<PeerAddress> next = new ArrayList<>(current.members());
    next.removeIf(p -> p.id().equals(id));
    if (next.isEmpty()) {
      throw AdminFailures.invalid("cannot remove the last member");
    }
    if (id.equals(current.leaderId())) {
      current = moveLeadershipOff(id, next);
    }
    setConfiguration(current, next, "removing " + id);
    return awaitMembership(next);
  }

  /**
   * Hands leadership from {@code id}, about to be removed, to a member that stays, before the
   * configuration change. A Ratis 3.3.0 leader that commits a configuration without itself can
   * leave the change unanswered and the remaining members without a leader; an ordinary transfer
   * first avoids that path. Members are tried in order: one that lags is refused by the leader.
   */
  private Membership moveLeadershipOff(String id, List<PeerAddress> staying) {
    FencingException last = null;
    for (PeerAddress candidate : staying) {
      try {
        transferLeadership(candidate.id());
        Membership now = membership();
        if (!id.equals(now.leaderId())) {
          return now;
        }
      } catch (FencingException e) {
        last = e;
      }
    }
    throw last != null
        ? last
        : AdminFailures.unavailable(
            "removing " + id + ": leadership could not be moved to another member", null);
  }

  // -----------------------------------------------------------------------------------------------
  // Leadership

  /**
   * Moves leadership to {@code to}, or (null) asks the leader to step down and lets the members
   * elect. Returns once a leader is known again: the new leader's id. A transfer is retried (up to
   * {@value #TRANSFER_ATTEMPTS} times) when another member wins the election right after it, which
   * a member that missed the new leader's first heartbeats can cause.
   */
  public String transferLeadership(String to) {
    String what = to == null ? "stepping down" : "transferring leadership to " + to;
    Membership current = membership();
    if (to != null && current.member(to).isEmpty()) {
      throw AdminFailures.notFound(
          "no member " + to + " in the configuration (" + current.peersProperty() + ")");
    }
    String previous = current.leaderId();
    for (int attempt = 1; ; attempt++) {
      if (to != null && to.equals(current.leaderId())) {
        return to;
      }
      try (RaftClient raft = adminClient(current)) {
        AdminFailures.check(
            raft.admin().transferLeadership(to == null ? null : RaftPeerId.valueOf(to), timeoutMs),
            what);
      } catch (IOException | RuntimeException e) {
        throw AdminFailures.failed(what, e);
      }
      Duration wait = to == null || attempt == TRANSFER_ATTEMPTS ? LEADER_WAIT : TRANSFER_SETTLE;
      String leader = awaitLeader(to, wait);
      if (to == null || to.equals(leader)) {
        if (leader.isEmpty()) {
          break;
        }
        return leader;
      }
      if (attempt == TRANSFER_ATTEMPTS) {
        break;
      }
      current = membership();
    }
    throw AdminFailures.unavailable(
        "no leader"
            + (to == null ? "" : " " + to)
            + " known "
            + LEADER_WAIT.toSeconds()
            + "s after "
            + what
            + " (previous leader "
            + (previous.isEmpty() ? "none" : previous)
            + ")",
        null);
  }

  /**
   * Moves leadership to another member: the most up to date follower, and among those the one the
   * leader heard from last. Returns the new leader's id.
   */
  public String transferLeadershipToAnother() {
    Membership current = membership();
    if (current.leaderId().isEmpty()) {
      throw AdminFailures.unavailable("no leader is known; nothing to move", null);
    }
    if (current.members().size() < 2) {
      throw AdminFailures.invalid("the cluster has a single member; there is no other to lead");
    }
    return transferLeadership(pickSuccessor(current));
  }

  /**
   * Asks the leader to step down; the members elect again (possibly the same one). Returns the
   * leader after.
   */
  public String stepDown() {
    return transferLeadership(null);
  }

  private String pickSuccessor(Membership current) {
    Map<String, Long> commit = new HashMap<>();
    Map<String, Long> lastHeardMs = new HashMap<>();
    try {
      GroupInfoReply info =
          ask(raftPeers(current.members()), RaftPeerId.valueOf(current.leaderId())).reply;
      for (CommitInfoProto c : info.getCommitInfos()) {
        commit.put(c.getServer().getId().toStringUtf8(), c.getCommitIndex());
      }
      RoleInfoProto role = info.getRoleInfoProto();
      if (role.hasLeaderInfo()) {
        for (ServerRpcProto f : role.getLeaderInfo().getFollowerInfoList()) {
          lastHeardMs.put(f.getId().getId().toStringUtf8(), f.getLastRpcElapsedTimeMs());
        }
      }
    } catch (FencingException e) {
      // Without the leader's figures any other member will do.
    }
    return current.members().stream()
        .map(PeerAddress::id)
        .filter(id -> !id.equals(current.leaderId()))
        .max(
            Comparator.<String>comparingLong(id -> commit.getOrDefault(id, -1L))
                .thenComparing(
                    Comparator.<String>comparingLong(
                            id -> lastHeardMs.getOrDefault(id, Long.MAX_VALUE))
                        .reversed()))
        .orElseThrow();
  }

  // -----------------------------------------------------------------------------------------------
  // Snapshots

  /** Takes a snapshot on {@code peerId} now; returns the log index it covers. */
  public long snapshot(String peerId, Duration timeout) {
    Membership current = membership();
    if (current.member(peerId).isEmpty()) {
      throw AdminFailures.notFound(
          "no member " + peerId + " in the configuration (" + current.peersProperty() + ")");
    }
    try (RaftClient raft = adminClient(current)) {
      RaftClientReply reply =
          raft.getSnapshotManagementApi(RaftPeerId.valueOf(peerId))
              .create(true, timeout.toMillis());
      AdminFailures.check(reply, "snapshot on " + peerId);
      return reply.getLogIndex();
    } catch (IOException | RuntimeException e) {
      throw AdminFailures.failed("snapshot on " + peerId, e);
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Internals

  /** One member's group info, read into a {@link Membership}. */
  private record Answer(GroupInfoReply reply, Membership membership) {}

  private Answer ask(List<RaftPeer> peers, RaftPeerId peer) {
    // One question to one node, answered from its memory: the normal request timeout bounds it.
    try (RaftClient probe = client(peers, null, RetryPolicies.noRetry(), config.requestTimeout())) {
      GroupInfoReply reply = probe.getGroupManagementApi(peer).info(config.groupId());
      if (!reply.isSuccess()) {
        throw AdminFailures.unavailable(
            "group info from " + peer + " failed: " + reply.getException(), reply.getException());
      }
      return new Answer(reply, toMembership(reply));
    } catch (IOException | RuntimeException e) {
      if (e instanceof FencingException f) {
        throw f;
      }
      throw AdminFailures.unavailable(AdminFailures.describe(e), e);
    }
  }

  private static Membership toMembership(GroupInfoReply reply) {
    RoleInfoProto role = reply.getRoleInfoProto();
    String self = role.getSelf().getId().toStringUtf8();
    String leader = "";
    if (role.getRole() == RaftPeerRole.LEADER) {
      leader = self;
    } else if (role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo()) {
      leader = role.getFollowerInfo().getLeaderInfo().getId().getId().toStringUtf8();
    }
    Optional<RaftConfigurationProto> conf = reply.getConf();
    List<RaftPeerProto> peers =
        conf.map(RaftConfigurationProto::getPeersList)
            .orElseGet(
                () ->
                    reply.getGroup().getPeers().stream().map(RaftPeer::getRaftPeerProto).toList());
    List<PeerAddress> members = new ArrayList<>();
    for (RaftPeerProto p : peers) {
      members.add(toPeerAddress(p.getId().toStringUtf8(), p.getAddress()));
    }
    boolean changing = conf.map(c -> c.getOldPeersCount() > 0).orElse(false);
    return new Membership(members, leader, self, changing);
  }

  private static PeerAddress toPeerAddress(String id, String address) {
    try {
      return PeerAddress.parse(id + "@" + address);
    } catch (ConfigException e) {
      throw new FencingException(
          new Result(
              Response.newBuilder()
                  .setCode(ResultCode.INTERNAL)
                  .setMessage(
                      "member " + id + " has an address this tool cannot read: '" + address + "'")
                  .build()),
          e);
    }
  }

  private static List<RaftPeer> raftPeers(List<PeerAddress> members) {
    return members.stream()
        .map(m -> RaftPeer.newBuilder().setId(m.id()).setAddress(m.address()).build())
        .toList();
  }

  private void setConfiguration(Membership current, List<PeerAddress> next, String what) {
    try (RaftClient raft = adminClient(current)) {
      // The List overload: the array overload of 3.3.0 never sets the servers (docs/design.md,
      // Ratis facts).
      AdminFailures.check(raft.admin().setConfiguration(raftPeers(next)), what);
    } catch (IOException | RuntimeException e) {
      throw AdminFailures.failed(what, e);
    }
  }

  /** Waits until the leader reports {@code wanted} as the settled configuration. */
  private Membership awaitMembership(List<PeerAddress> wanted) {
    long deadline = System.nanoTime() + LEADER_WAIT.toNanos();
    Membership seen = null;
    while (System.nanoTime() < deadline) {
      try {
        seen = membership();
        if (!seen.changing()
            && seen.members().size() == wanted.size()
            && seen.members().containsAll(wanted)
            && !seen.leaderId().isEmpty()) {
          return seen;
        }
      } catch (FencingException e) {
        // An election after the change; ask again.
      }
      sleep();
    }
    if (seen != null) {
      return seen; // committed (Raft said so); the view just has not settled yet
    }
    throw AdminFailures.unavailable(
        "the configuration changed, but no member answered afterwards", null);
  }

  /**
   * Waits up to {@code wait} until a leader is known that is {@code wanted} (or, with null, any
   * leader at all); returns the last leader seen, "" if none.
   */
  private String awaitLeader(String wanted, Duration wait) {
    long deadline = System.nanoTime() + wait.toNanos();
    String last = "";
    while (true) {
      try {
        last = membership().leaderId();
        if (!last.isEmpty() && (wanted == null || wanted.equals(last))) {
          return last;
        }
      } catch (FencingException e) {
        // An election is running; ask again.
      }
      if (System.nanoTime() >= deadline) {
        return last;
      }
      sleep();
    }
  }

  private static void sleep() {
    try {
      Thread.sleep(POLL_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw AdminFailures.unavailable("interrupted", e);
    }
  }

  /**
   * A client for admin calls over the members Raft reports, aimed at the leader if one is known.
   */
  private RaftClient adminClient(Membership current) {
    return client(
        raftPeers(current.members()),
        current.leaderId().isEmpty() ? null : RaftPeerId.valueOf(current.leaderId()),
        // A few attempts for redirects and a member that is briefly away; the cluster bounds each
        // call.
        RetryPolicies.retryUpToMaximumCountWithFixedSleep(
            5, TimeDuration.valueOf(500, TimeUnit.MILLISECONDS)),
        adminCallTimeout());
  }

  /**
   * Admin calls wait for Raft itself (a new member catching up, a leadership transfer): give them
   * room.
   */
  private Duration adminCallTimeout() {
    return Duration.ofMillis(Math.max(ADMIN_CALL_TIMEOUT.toMillis(), timeoutMs + 5_000));
  }

  private RaftClient client(
      List<RaftPeer> peers, RaftPeerId leader, RetryPolicy retry, Duration requestTimeout) {
    RaftProperties properties = config.clientProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(
        properties, TimeDuration.valueOf(requestTimeout.toMillis(), TimeUnit.MILLISECONDS));
    RaftClient.Builder builder =
        RaftClient.newBuilder()
            .setRaftGroup(RaftGroup.valueOf(config.groupId(), peers))
            .setProperties(properties)
            .setParameters(config.ratisParameters())
            .setRetryPolicy(
                event ->
                    AdminFailures.refusedByNode(event.getCause()) != null
                        ? RetryPolicy.NO_RETRY_ACTION
                        : retry.handleAttemptFailure(event));
    if (leader != null) {
      builder.setLeaderId(leader);
    }
    return builder.build();
  }

  /** Nothing is held between calls: every operation opens and closes its own Raft clients. */
  @Override
  public void close() {}
}
