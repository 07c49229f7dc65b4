package dev.fencekeeper.server;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.raftlog.RaftLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a running node's {@link ClusterIdentity} up to date. Until the node knows its cluster id it
 * mints it from the log — when its log still begins at the cluster's first entry, every member
 * derives the same id from the first committed state-machine entry ({@link ClusterIdentity#mint}) —
 * or else learns it from a peer. Once it knows the id, it records every peer that Ratis reports
 * holding committed entries (the commit indexes the leader shares with its followers), so that the
 * peer, should it come back with empty storage, is refused ({@link StartCheck}).
 *
 * <p>It looks every {@value #INTERVAL_MS} ms until it knows the id and has recorded every member of
 * the Raft configuration (old and new, while one changes), and then sleeps until {@link
 * #configurationChanged}: with the id known and every member recorded there is nothing left to
 * learn until the members change, and Ratis tells every replica when it applies a configuration
 * entry or installs a snapshot from the leader that carries a newer configuration. A member that
 * never comes up keeps it looking, as before.
 */
final class ClusterIdKeeper implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterIdKeeper.class);
  private static final long INTERVAL_MS = 500;

  /** How many ticks pass between two rounds of asking peers for the id. */
  private static final int ASK_EVERY = 4;

  /** How far into a log that begins at index 0 the first state-machine entry is looked for. */
  private static final int FIRST_ENTRY_SEARCH = 64;

  static final Duration ASK_TIMEOUT = Duration.ofSeconds(2);

  private final ClusterConfig config;
  private final GrpcTlsConfig tls;
  private final ClusterIdentity identity;
  private final RaftServer server;
  private final ScheduledExecutorService timer;
  private final PollUntilSettled poll;
  private volatile boolean closed;
  private int ticks;

  ClusterIdKeeper(
      ClusterConfig config, GrpcTlsConfig tls, ClusterIdentity identity, RaftServer server) {
    this.config = config;
    this.tls = tls;
    this.identity = identity;
    this.server = server;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "fencekeeper-cluster-id-" + config.self().id());
              t.setDaemon(true);
              return t;
            });
    this.poll = new PollUntilSettled(timer, Duration.ofMillis(INTERVAL_MS), this::tick);
  }

  void start() {
    poll.start();
  }

  /** A configuration entry was applied here: the members may have changed. */
  void configurationChanged() {
    poll.wake();
  }

  /** Whether to look again: until the id is known and every member of the configuration seen. */
  private boolean tick() {
    try {
      RaftServer.Division division;
      try {
        division = server.getDivision(RaftConfig.groupId(config));
        division.getRaftLog().getStartIndex();
      } catch (IOException | IllegalStateException notYet) {
        division = null; // a joining node before the cluster added it, or a log still opening
      }
      if (identity.clusterId().isEmpty()) {
        Optional<String> id = division == null ? Optional.empty() : fromLog(division);
        if (id.isEmpty() && ticks++ % ASK_EVERY == 0) {
          id = fromPeers();
        }
        if (id.isPresent() && identity.adopt(id.get())) {
          LOG.info("{} belongs to cluster {}", config.self().id(), id.get());
        }
      }
      if (division != null && identity.clusterId().isPresent()) {
        for (CommitInfoProto info : division.getCommitInfos()) {
          if (info.getCommitIndex() > 0) {
            identity.see(info.getServer().getId().toStringUtf8());
          }
        }
        return !seenEveryMember(division);
      }
      return true;
    } catch (IOException | RuntimeException e) {
      if (!closed) {
        LOG.warn("{}: keeping the cluster id failed: {}", config.self().id(), e.toString());
      }
      return true;
    }
  }

  private boolean seenEveryMember(RaftServer.Division division) {
    for (RaftPeer peer : division.getRaftConf().getAllPeers()) {
      if (!identity.hasSeen(peer.getId().toString())) {
        return false;
      }
    }
    return true;
  }

  /** The id minted from the first committed state-machine entry, if this log still holds it. */
  private Optional<String> fromLog(RaftServer.Division division) throws IOException {
    RaftLog log = division.getRaftLog();
    if (log.getStartIndex() != 0) {
      return Optional.empty();
    }
    long applied = division.getInfo().getLastAppliedIndex();
    for (long i = 0; i <= Math.min(applied, FIRST_ENTRY_SEARCH); i++) {
      LogEntryProto entry = log.get(i);
      if (entry != null && entry.hasStateMachineLogEntry()) {
        LoggedCommand logged =
            LoggedCommand.parseFrom(entry.getStateMachineLogEntry().getLogData());
        return Optional.of(
            ClusterIdentity.mint(
                RaftConfig.groupId(config).getUuid().toString(),
                entry.getTerm(),
                entry.getIndex(),
                logged.getStampMs()));
      }
    }
    return Optional.empty();
  }

  private Optional<String> fromPeers() {
    List<StartCheck.Answer> answers = PeerIntroductions.introduce(config, tls, "", ASK_TIMEOUT);
    List<String> ids =
        answers.stream()
            .map(StartCheck.Answer::clusterId)
            .filter(id -> !id.isEmpty())
            .distinct()
            .toList();
    return ids.size() == 1 ? Optional.of(ids.get(0)) : Optional.empty();
  }

  @Override
  public void close() {
    closed = true;
    timer.shutdownNow();
  }
}
