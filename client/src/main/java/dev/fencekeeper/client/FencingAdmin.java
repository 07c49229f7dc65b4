package dev.fencekeeper.client;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.AddMemberRequest;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.FollowerProgress;
import dev.fencekeeper.proto.JoinGroupRequest;
import dev.fencekeeper.proto.Member;
import dev.fencekeeper.proto.MembersRequest;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.RemoveMemberRequest;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.SnapshotRequest;
import dev.fencekeeper.proto.TransferLeadershipRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.thirdparty.com.google.protobuf.Message;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;

/**
 * Cluster operations that are Raft's own business rather than the state machine's: membership,
 * moving the leader, snapshots, and what each node says about itself. Every one is a call of the
 * client protocol on the nodes' client ports (docs/protocol.md, Admin), which each node serves
 * through its own Raft server; no Raft address is contacted. Failures are thrown as {@link
 * FencingException} whose code says what kind: UNAVAILABLE (no node answered, or Raft refused or
 * timed out), NOT_FOUND (no such member), INVALID_ARGUMENT (the change makes no sense) or
 * PERMISSION_DENIED (the identity is not in {@code authz.admins}), with a message naming what
 * failed.
 *
 * <p>The configured nodes are only where to start: membership is asked of any of them and then of
 * the leader it names (whose view is authoritative), and changes are sent to the leader, following
 * NOT_LEADER answers. So an admin pointed at the three original nodes still reaches members added
 * later.
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
  private final ScheduledExecutorService timer;
  private final ExecutorService executor;
  private final ClientPortTransport port;

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
    this.timer = Executors.newSingleThreadScheduledExecutor(daemon("fencekeeper-admin-timer"));
    this.executor = Executors.newCachedThreadPool(daemon("fencekeeper-admin"));
    this.port =
        new ClientPortTransport(
            config.clientAddresses(),
            ClientSettings.sslContext(config),
            config.requestTimeout().toMillis(),
            new Reachability(),
            new ClientMetrics(null),
            timer,
            executor);
  }

  ClientPortTransport port() {
    return port;
  }

  /** An admin handle for the cluster described by {@code config}; nodes are contacted lazily. */
  public static FencingAdmin connect(ClusterConfig config) {
    return new FencingAdmin(config);
  }

  // -----------------------------------------------------------------------------------------------
  // Status

  /**
   * What node {@code peerId} says about itself, asked of that node alone over its client port (not
   * through Raft or the leader), so that a busy cluster still answers.
   *
   * @throws FencingException with UNAVAILABLE if it does not answer within {@code timeout}
   */
  public NodeStatus nodeStatus(String peerId, Duration timeout) {
    NodeInfo info = nodeInfo(peerId, timeout);
    return new NodeStatus(
        info.getId(),
        info.getAddress(),
        info.getRole(),
        info.getTerm(),
        info.getLastAppliedIndex(),
        info.getCommitIndex(),
        info.getLeaderId(),
        info.getClusterId());
  }

  /**
   * Which cluster each configured node (each endpoint) belongs to, every node asked at once over
   * its own client port and given {@code timeout} to answer: a client given the endpoints of one
   * cluster checks with {@link EndpointClusters#oneCluster()} that they do not span two. A node
   * that does not answer is listed with the reason, not thrown.
   */
  public EndpointClusters endpointClusters(Duration timeout) {
    Map<String, CompletableFuture<NodeInfo>> asked = new LinkedHashMap<>();
    for (PeerAddress node : config.clientAddresses()) {
      asked.put(
          node.id(),
          CompletableFuture.supplyAsync(() -> nodeInfoAt(node.address(), timeout), executor));
    }
    Map<String, String> clusterIds = new HashMap<>();
    Map<String, String> unanswered = new HashMap<>();
    asked.forEach(
        (id, answer) -> {
          try {
            clusterIds.put(id, answer.join().getClusterId());
          } catch (CompletionException e) {
            unanswered.put(id, AdminFailures.describe(e.getCause() == null ? e : e.getCause()));
          }
        });
    return new EndpointClusters(clusterIds, unanswered);
  }

  /**
   * See {@link #nodeStatus}: every field the node sent. A node the config names is asked at its
   * configured client address; any other member (one added since, or any node when the config names
   * endpoints only) at the client address the cluster reports for it.
   */
  NodeInfo nodeInfo(String peerId, Duration timeout) {
    String address = port.addressOf(peerId);
    if (address == null) {
      Answer answer = ask();
      address = answer.clientAddresses.get(peerId);
      if (address == null || address.isEmpty()) {
        throw AdminFailures.notFound(
            "no member '"
                + peerId
                + "' in the configuration ("
                + answer.membership.peersProperty()
                + "): name one of its node ids");
      }
    }
    return nodeInfoAt(address, timeout);
  }

  private NodeInfo nodeInfoAt(String clientAddress, Duration timeout) {
    Response r =
        call(
            FencekeeperGrpc.getNodeStatusMethod(),
            NodeInfoQuery.getDefaultInstance(),
            timeout,
            timeout,
            clientAddress,
            "status of " + clientAddress);
    return r.getNode();
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
   * The group's membership: asks any configured node, then, when that one names a leader other than
   * itself, the leader (whose view is authoritative) as well.
   */
  public Membership membership() {
    return ask().membership;
  }

  /**
   * Adds {@code peer}, reached at its client port by the default rule (its Raft port + {@value
   * ClusterConfig#CLIENT_PORT_OFFSET}); a node whose {@code client.port} departs from that rule is
   * added with {@link #addMember(PeerAddress, String)}. Returns the new membership.
   */
  public Membership addMember(PeerAddress peer) {
    String clientAddress;
    try {
      clientAddress =
          new PeerAddress(peer.id(), peer.host(), ClusterConfig.defaultClientPort(peer)).address();
    } catch (ConfigException e) {
      throw AdminFailures.invalid(e.getMessage());
    }
    return addMember(peer, clientAddress);
  }

  /**
   * Adds {@code peer}, which must already run without the group ({@code fencekeeper server --join})
   * and serve clients at {@code clientAddress} ({@code host:port}, its {@code client.port}): the
   * group is created on it there with the new configuration, then the configuration grows to
   * include it, recording {@code clientAddress} as the member's client address, which the cluster
   * reports for it from then on ({@link #clientAddresses()}). Raft's joint consensus keeps the
   * group available throughout; the leader first lets the new member catch up (from a snapshot and
   * the log) before it counts towards the majority. Returns the new membership.
   *
   * @throws FencingException with INVALID_ARGUMENT if {@code clientAddress} is not {@code
   *     host:port} or is the member's Raft address
   */
  public Membership addMember(PeerAddress peer, String clientAddress) {
    java.util.Objects.requireNonNull(peer, "peer must not be null");
    java.util.Objects.requireNonNull(clientAddress, "clientAddress must not be null");
    String client;
    try {
      client = PeerAddress.parse(peer.id() + "@" + clientAddress.trim()).address();
    } catch (ConfigException e) {
      throw AdminFailures.invalid(
          "client address of "
              + peer.id()
              + ": '"
              + clientAddress
              + "' is not host:port ("
              + e.getMessage()
              + ")");
    }
    if (client.equalsIgnoreCase(peer.address())) {
      throw AdminFailures.invalid(
          "client address of "
              + peer.id()
              + ": '"
              + client
              + "' is its Raft address; give the port it serves clients on (its client.port)");
    }
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
    JoinGroupRequest.Builder join = JoinGroupRequest.newBuilder();
    for (PeerAddress m : next) {
      Member.Builder member = Member.newBuilder().setId(m.id()).setAddress(m.address());
      if (m.equals(peer)) {
        member.setClientAddress(client);
      }
      join.addMembers(member);
    }
    try {
      call(
          FencekeeperGrpc.getJoinGroupMethod(),
          join.build(),
          adminCallTimeout(),
          adminCallTimeout(),
          client,
          "creating the group on " + peer);
    } catch (FencingException e) {
      if (e.result().code() != dev.fencekeeper.client.ResultCode.UNAVAILABLE) {
        throw e;
      }
      throw AdminFailures.unavailable(
          "cannot reach new member "
              + peer
              + " at its client port "
              + client
              + " (is it running with `server --join`?): "
              + e.result().message(),
          e);
    }
    change(
        FencekeeperGrpc.getAddMemberMethod(),
        AddMemberRequest.newBuilder()
            .setId(peer.id())
            .setAddress(peer.address())
            .setClientAddress(client)
            .build(),
        "adding " + peer.id());
    return awaitMembership(next);
  }

  /**
   * Each member's client address ({@code host:port}) by member id, as the cluster reports it: the
   * address it was added with, the one the leader announced for itself, or else by the default
   * rule.
   */
  public Map<String, String> clientAddresses() {
    Map<String, String> addresses = new java.util.TreeMap<>(ask().clientAddresses);
    addresses.values().removeIf(String::isEmpty);
    return java.util.Collections.unmodifiableMap(addresses);
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
    change(
        FencekeeperGrpc.getRemoveMemberMethod(),
        RemoveMemberRequest.newBuilder().setId(id).build(),
        "removing " + id);
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
      change(
          FencekeeperGrpc.getTransferLeadershipMethod(),
          TransferLeadershipRequest.newBuilder()
              .setTo(to == null ? "" : to)
              .setTimeoutMs(timeoutMs)
              .build(),
          what);
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
    Map<String, Long> match = new HashMap<>();
    Map<String, Double> behindSeconds = new HashMap<>();
    try {
      NodeInfo leader = nodeInfoAt(ask().leaderAddress, config.requestTimeout());
      for (FollowerProgress f : leader.getFollowersList()) {
        match.put(f.getId(), f.getMatchIndex());
        behindSeconds.put(f.getId(), f.getLagSeconds());
      }
    } catch (FencingException e) {
      // Without the leader's figures any other member will do.
    }
    return current.members().stream()
        .map(PeerAddress::id)
        .filter(id -> !id.equals(current.leaderId()))
        .max(
            Comparator.<String>comparingLong(id -> match.getOrDefault(id, -1L))
                .thenComparing(
                    Comparator.<String>comparingDouble(
                            id -> behindSeconds.getOrDefault(id, Double.MAX_VALUE))
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
    String address = clientAddressOf(peerId);
    Response r =
        call(
            FencekeeperGrpc.getSnapshotMethod(),
            SnapshotRequest.newBuilder().setTimeoutMs(timeout.toMillis()).build(),
            timeout.plus(config.requestTimeout()),
            timeout.plus(config.requestTimeout()),
            address,
            "snapshot on " + peerId);
    return r.getSnapshotIndex();
  }

  // -----------------------------------------------------------------------------------------------
  // Internals

  /** A membership as reported, with the client addresses of its members and of the leader. */
  private record Answer(
      Membership membership, Map<String, String> clientAddresses, String leaderAddress) {}

  /** Any node's view, then the leader's when that node names another leader. */
  private Answer ask() {
    Answer first = anyMember();
    String leader = first.membership.leaderId();
    if (leader.isEmpty()
        || leader.equals(first.membership.reportedBy())
        || first.leaderAddress.isEmpty()) {
      return first;
    }
    try {
      Answer fromLeader = members(first.leaderAddress);
      return fromLeader.membership.reportedBy().equals(leader) ? fromLeader : first;
    } catch (FencingException e) {
      return first; // the leader moved or is unreachable right now; a member's view will do
    }
  }

  /**
   * The membership as some configured node reports it, the nodes asked in turn: a node started with
   * {@code --join} and not yet added (the one {@code members add} is about to add, listed in the
   * peers like any other) has no group to report and answers UNAVAILABLE, as does one that is down.
   * When none answers, a refusal (PERMISSION_DENIED) is what is thrown: it is the caller's to fix.
   */
  private Answer anyMember() {
    List<PeerAddress> nodes = new ArrayList<>(config.clientAddresses());
    Collections.shuffle(nodes);
    FencingException last = null;
    FencingException denied = null;
    for (PeerAddress node : nodes) {
      try {
        return members(node.address());
      } catch (FencingException e) {
        // A refusal may be one node's (its TLS certificate from another CA): the next may answer.
        if (e.result().code() == ResultCode.PERMISSION_DENIED && denied == null) {
          denied = e;
        }
        last = e;
      }
    }
    throw denied != null ? denied : last;
  }

  /** The membership as the node at {@code clientAddress} (null: any node) reports it. */
  private Answer members(String clientAddress) {
    Duration each = config.requestTimeout();
    Response r =
        call(
            FencekeeperGrpc.getMembersMethod(),
            MembersRequest.getDefaultInstance(),
            clientAddress == null ? each.multipliedBy(config.clientAddresses().size()) : each,
            each,
            clientAddress,
            "membership");
    List<PeerAddress> members = new ArrayList<>();
    Map<String, String> clientAddresses = new HashMap<>();
    for (Member m : r.getMembership().getMembersList()) {
      members.add(toPeerAddress(m.getId(), m.getAddress()));
      clientAddresses.put(m.getId(), m.getClientAddress());
    }
    return new Answer(
        new Membership(
            members,
            r.getMembership().getLeaderId(),
            r.getMembership().getReportedBy(),
            r.getMembership().getChanging()),
        clientAddresses,
        r.getLeaderAddress());
  }

  /** Member {@code id}'s client address, as the cluster reports it. */
  private String clientAddressOf(String id) {
    String address = ask().clientAddresses.get(id);
    if (address == null || address.isEmpty()) {
      String configured = port.addressOf(id);
      if (configured == null) {
        throw AdminFailures.unavailable("the client address of member " + id + " is unknown", null);
      }
      return configured;
    }
    return address;
  }

  private static PeerAddress toPeerAddress(String id, String address) {
    try {
      return PeerAddress.parse(id + "@" + address);
    } catch (ConfigException e) {
      throw AdminFailures.failure(
          dev.fencekeeper.proto.ResultCode.INTERNAL,
          "member " + id + " has an address this tool cannot read: '" + address + "'",
          e);
    }
  }

  /** Sends a change to the leader, following NOT_LEADER answers; fails unless it was made. */
  private <T extends Message> void change(
      MethodDescriptor<T, Response> method, T request, String what) {
    call(method, request, adminCallTimeout(), adminCallTimeout(), null, what);
  }

  /**
   * One admin call: to the node at {@code pinned}, or (null) to the leader, until a node answers or
   * {@code callTimeout} is up, each attempt given {@code attemptTimeout}. Returns a FOUND or
   * ACCEPTED answer; every other answer, and no answer, is thrown as a {@link FencingException}
   * saying what failed.
   */
  private <T extends Message> Response call(
      MethodDescriptor<T, Response> method,
      T request,
      Duration callTimeout,
      Duration attemptTimeout,
      String pinned,
      String what) {
    CompletableFuture<ClientPortTransport.Answer> sent =
        port.call(
            method,
            request,
            callTimeout.toMillis(),
            attemptTimeout.toMillis(),
            pinned,
            pinned == null && method != FencekeeperGrpc.getMembersMethod());
    Response r;
    try {
      r = sent.get(callTimeout.toMillis() + POLL_MS, TimeUnit.MILLISECONDS).response();
    } catch (InterruptedException e) {
      sent.cancel(true);
      Thread.currentThread().interrupt();
      throw AdminFailures.unavailable(what + ": interrupted", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw AdminFailures.unavailable(
          (pinned == null ? "no node answered" : pinned + " did not answer")
              + " ("
              + what
              + "): "
              + AdminFailures.describe(cause),
          cause);
    } catch (TimeoutException e) {
      sent.cancel(true);
      throw AdminFailures.unavailable(
          what + ": no answer within " + callTimeout.toMillis() + " ms", e);
    }
    if (r.hasNode()) {
      return r; // NodeStatus: the node's description is the answer, whatever its code says
    }
    return switch (r.getCode()) {
      case FOUND, ACCEPTED -> r;
      case NOT_FOUND, INVALID_ARGUMENT, PERMISSION_DENIED ->
          throw AdminFailures.failure(r.getCode(), r.getMessage(), null);
      default ->
          throw AdminFailures.unavailable(
              what + " failed: " + r.getCode() + " (" + r.getMessage() + ")", null);
    };
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
   * Admin calls wait for Raft itself (a new member catching up, a leadership transfer): give them
   * room.
   */
  private Duration adminCallTimeout() {
    return Duration.ofMillis(Math.max(ADMIN_CALL_TIMEOUT.toMillis(), timeoutMs + 5_000));
  }

  private static java.util.concurrent.ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * Closes the connections to the nodes, then the threads their answers run on (in that order: a
   * connection still closing must find its executor running).
   */
  @Override
  public void close() {
    port.close();
    executor.shutdown();
    timer.shutdownNow();
  }
}
