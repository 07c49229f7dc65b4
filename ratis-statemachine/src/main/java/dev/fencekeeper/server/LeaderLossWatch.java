package dev.fencekeeper.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.proto.RaftProtos.RequestVoteReplyProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts an election as soon as the leader's process is gone, instead of an election timeout later.
 *
 * <p>A follower learns that its leader crashed only when no append has arrived for an election
 * timeout (400-800 ms by default), which was most of the time from a leader kill to writes
 * succeeding again (docs/benchmarks.md). But a crashed process's sockets are closed by its kernel
 * at once: the leader's append stream to this node is cancelled within milliseconds, and its port
 * refuses connections. ZooKeeper's followers act on the same signal (their leader's socket closes)
 * and so does this watch: when an append stream ends, it tries the leader's address, and only if
 * the connection is <em>refused</em> (no process listens there; a slow, paused or cut-off leader
 * still accepts or times out) does it start an election on this node at once, skipping pre-vote.
 *
 * <p>Only one follower acts, the leader's designated successor (the next voting member after it in
 * id order): two followers starting elections in the same instant would split the votes and both
 * wait out a timeout. A dead leader may have sent its last entries to some followers and not to
 * others, and a candidate whose log is behind a voter's loses that vote; the voter, having seen the
 * candidate's higher term, then waits a whole election timeout before it stands itself. So before
 * it stands, the successor asks the other voters for their last entries with a pre-vote request
 * (which changes nothing on a voter that refuses it, and whose answer carries the voter's last
 * entry); if one is ahead of its own, it asks the one furthest ahead to stand instead, as a leader
 * hands over leadership. If the successor is down too, or a voter does not answer, the ordinary
 * timeout elects a leader as before. Safety never depends on this: Raft's votes and the fencing
 * checks decide; this only decides when an election begins, and where.
 */
final class LeaderLossWatch implements ServerInterceptor, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaderLossWatch.class);

  /**
   * A dying process may still be closing its sockets when the first stream breaks: try a few times.
   */
  private static final int PROBES = 4;

  private static final long PROBE_INTERVAL_MS = 40;
  private static final int CONNECT_TIMEOUT_MS = 200;

  /**
   * How long the successor waits for the other voters' last entries: a voter that answers later is
   * left out, and the successor stands on what it has heard.
   */
  private static final long LAST_ENTRY_WAIT_MS = 300;

  private final RaftPeerId self;
  private final RaftGroupId groupId;
  private final Runnable onElectionStarted;
  private final ScheduledExecutorService probes;
  private final ExecutorService questions;
  private final AtomicBoolean probing = new AtomicBoolean();
  private volatile RaftServer server;

  LeaderLossWatch(RaftPeerId self, RaftGroupId groupId, Runnable onElectionStarted) {
    this.self = self;
    this.groupId = groupId;
    this.onElectionStarted = onElectionStarted;
    this.probes =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "fencekeeper-leader-loss-" + self);
              t.setDaemon(true);
              return t;
            });
    this.questions =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "fencekeeper-leader-loss-ask-" + self);
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * The Ratis server to watch over; its gRPC services (and so this interceptor) exist before it
   * does.
   */
  void watch(RaftServer raftServer) {
    this.server = raftServer;
  }

  /**
   * The member that starts the election when {@code leader} is gone: the next voting member after
   * it in id order, wrapping around; empty when there is no other voter.
   */
  static Optional<RaftPeerId> successor(Collection<RaftPeerId> voters, RaftPeerId leader) {
    List<String> others =
        voters.stream()
            .map(RaftPeerId::toString)
            .filter(id -> !id.equals(leader.toString()))
            .sorted()
            .toList();
    if (others.isEmpty()) {
      return Optional.empty();
    }
    String next =
        others.stream()
            .filter(id -> id.compareTo(leader.toString()) > 0)
            .findFirst()
            .orElse(others.get(0));
    return Optional.of(RaftPeerId.valueOf(next));
  }

  /**
   * The voter that should stand instead of this node: the one whose last entry is furthest ahead of
   * {@code own}, the lowest id among equals; empty when none is ahead, so this node stands.
   */
  static Optional<RaftPeerId> furthestAhead(TermIndex own, Map<RaftPeerId, TermIndex> others) {
    return others.entrySet().stream()
        .filter(e -> e.getValue().compareTo(own) > 0)
        .max(
            Comparator.<Map.Entry<RaftPeerId, TermIndex>, TermIndex>comparing(Map.Entry::getValue)
                .thenComparing(
                    e -> e.getKey().toString(), Comparator.<String>naturalOrder().reversed()))
        .map(Map.Entry::getKey);
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    ServerCall.Listener<Q> listener = next.startCall(call, headers);
    if (!RaftServerProtocolServiceGrpc.SERVICE_NAME.equals(
            call.getMethodDescriptor().getServiceName())
        || !"appendEntries".equals(call.getMethodDescriptor().getBareMethodName())) {
      return listener;
    }
    // A killed leader's streams are cancelled; a closing one's are half-closed. Either way the port
    // tells.
    return new SimpleForwardingServerCallListener<>(listener) {
      @Override
      public void onCancel() {
        try {
          super.onCancel();
        } finally {
          appendStreamEnded();
        }
      }

      @Override
      public void onHalfClose() {
        try {
          super.onHalfClose();
        } finally {
          appendStreamEnded();
        }
      }
    };
  }

  private void appendStreamEnded() {
    if (server == null || !probing.compareAndSet(false, true)) {
      return;
    }
    try {
      probes.execute(() -> probe(PROBES));
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      probing.set(false);
    }
  }

  private void probe(int left) {
    boolean again = false;
    try {
      again = !tryStartElection() && left > 1;
    } catch (IOException | RuntimeException e) {
      LOG.debug("{}: leader-loss probe failed", self, e);
    } finally {
      if (again) {
        probes.schedule(() -> probe(left - 1), PROBE_INTERVAL_MS, TimeUnit.MILLISECONDS);
      } else {
        probing.set(false);
      }
    }
  }

  /**
   * True when nothing more is to be done: an election was started, or this node is not the one to
   * start it.
   */
  private boolean tryStartElection() throws IOException {
    RaftServer.Division division = server.getDivision(groupId);
    DivisionInfo info = division.getInfo();
    RaftPeerId leader = info.getLeaderId();
    if (!info.isFollower() || leader == null) {
      return true;
    }
    Collection<RaftPeer> voters = division.getRaftConf().getCurrentPeers();
    if (!successor(voters.stream().map(RaftPeer::getId).toList(), leader)
        .map(self::equals)
        .orElse(false)) {
      return true;
    }
    RaftPeer leaderPeer =
        voters.stream().filter(p -> p.getId().equals(leader)).findFirst().orElse(null);
    if (leaderPeer == null || !refusesConnections(leaderPeer.getAddress())) {
      return false;
    }
    TermIndex last = division.getRaftLog().getLastEntryTermIndex();
    if (last == null) {
      return true;
    }
    List<RaftPeerId> others =
        voters.stream()
            .map(RaftPeer::getId)
            .filter(id -> !id.equals(self) && !id.equals(leader))
            .toList();
    Map<RaftPeerId, TermIndex> theirs = lastEntries(others, info.getCurrentTerm(), last);
    Optional<RaftPeerId> ahead = furthestAhead(last, theirs);
    if (ahead.isPresent() && askToStand(ahead.get(), leader, theirs.get(ahead.get()))) {
      LOG.info(
          "{}: leader {} refuses connections at {} (its process is gone): {} has the longer log ({}"
              + " against this node's {}), so it starts the election now",
          self,
          leader,
          leaderPeer.getAddress(),
          ahead.get(),
          theirs.get(ahead.get()),
          last);
      onElectionStarted.run();
      return true;
    }
    // Ratis starts an election on a follower when its leader asks it to (leadership transfer); the
    // request names the leader and the leader's last entry. Here it names the gone leader and this
    // node's own last entry in the current term, so Ratis's checks pass exactly when this node is a
    // fit candidate.
    StartLeaderElectionRequestProto request =
        StartLeaderElectionRequestProto.newBuilder()
            .setServerRequest(
                ClientProtoUtils.toRaftRpcRequestProtoBuilder(
                    RaftGroupMemberId.valueOf(leader, groupId), self))
            .setLeaderLastEntry(TermIndex.valueOf(info.getCurrentTerm(), last.getIndex()).toProto())
            .build();
    boolean started = server.startLeaderElection(request).getServerReply().getSuccess();
    if (started) {
      LOG.info(
          "{}: leader {} refuses connections at {} (its process is gone): starting an election now"
              + " instead of after the election timeout",
          self,
          leader,
          leaderPeer.getAddress());
      onElectionStarted.run();
    }
    return true;
  }

  /**
   * The last entries of {@code peers} that answer within {@link #LAST_ENTRY_WAIT_MS}, asked with a
   * pre-vote request. A voter handles a pre-vote without changing its term, its vote or its role;
   * one that still trusts its leader refuses it, and every answer carries the voter's last entry.
   */
  private Map<RaftPeerId, TermIndex> lastEntries(
      List<RaftPeerId> peers, long currentTerm, TermIndex own) {
    Map<RaftPeerId, CompletableFuture<TermIndex>> asked = new LinkedHashMap<>();
    for (RaftPeerId peer : peers) {
      RequestVoteRequestProto question =
          RequestVoteRequestProto.newBuilder()
              .setServerRequest(
                  ClientProtoUtils.toRaftRpcRequestProtoBuilder(
                      RaftGroupMemberId.valueOf(self, groupId), peer))
              .setCandidateTerm(currentTerm + 1)
              .setCandidateLastEntry(own.toProto())
              .setPreVote(true)
              .build();
      asked.put(
          peer,
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  RequestVoteReplyProto answer = server.getServerRpc().requestVote(question);
                  return answer.hasLastEntry() ? TermIndex.valueOf(answer.getLastEntry()) : null;
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              },
              questions));
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LAST_ENTRY_WAIT_MS);
    Map<RaftPeerId, TermIndex> answers = new HashMap<>();
    for (Map.Entry<RaftPeerId, CompletableFuture<TermIndex>> e : asked.entrySet()) {
      try {
        TermIndex answer =
            e.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (answer != null) {
          answers.put(e.getKey(), answer);
        }
      } catch (ExecutionException | TimeoutException failed) {
        LOG.debug("{}: {} did not tell its last entry", self, e.getKey(), failed);
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return answers;
  }

  /**
   * Asks {@code peer} to start an election at once, as the gone {@code leader} would hand over
   * leadership: Ratis starts it there when {@code peer} still follows that leader and its log is at
   * {@code peerLast}.
   */
  private boolean askToStand(RaftPeerId peer, RaftPeerId leader, TermIndex peerLast) {
    StartLeaderElectionRequestProto request =
        StartLeaderElectionRequestProto.newBuilder()
            .setServerRequest(
                ClientProtoUtils.toRaftRpcRequestProtoBuilder(
                    RaftGroupMemberId.valueOf(leader, groupId), peer))
            .setLeaderLastEntry(peerLast.toProto())
            .build();
    try {
      return server.getServerRpc().startLeaderElection(request).getServerReply().getSuccess();
    } catch (IOException | RuntimeException e) {
      LOG.debug("{}: {} could not be asked to stand", self, peer, e);
      return false;
    }
  }

  private static boolean refusesConnections(String address) {
    int colon = address.lastIndexOf(':');
    if (colon < 0) {
      return false;
    }
    try (Socket socket = new Socket()) {
      socket.connect(
          new InetSocketAddress(
              address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))),
          CONNECT_TIMEOUT_MS);
      return false;
    } catch (ConnectException e) {
      return String.valueOf(e.getMessage()).contains("refused");
    } catch (IOException | RuntimeException e) {
      return false; // unreachable, slow or unresolvable: not proof that the leader is gone
    }
  }

  @Override
  public void close() {
    probes.shutdownNow();
    questions.shutdownNow();
  }
}
