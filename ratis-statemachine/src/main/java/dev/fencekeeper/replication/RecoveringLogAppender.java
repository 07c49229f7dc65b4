package dev.fencekeeper.replication;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.grpc.server.GrpcLogAppender;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ratis's gRPC log appender, plus a way out of the state in which it stops sending a follower
 * entries while that follower answers every heartbeat with INCONSISTENCY (docs/ratis-workarounds.md
 * explains the fault in Ratis). {@link FollowerStall} watches the replies; when it says so, the
 * leader restarts this follower's appender through Ratis's public {@link LeaderState#restart},
 * which replaces the appender and its stale match and next index with fresh ones. Each appender
 * restarts itself at most once; its successor watches anew.
 */
public final class RecoveringLogAppender extends GrpcLogAppender {
  private static final Logger LOG = LoggerFactory.getLogger(RecoveringLogAppender.class);

  /**
   * How long a follower may answer INCONSISTENCY without its match index moving, unless {@code
   * raft.stuck-follower.restart-after} says otherwise.
   */
  public static final long DEFAULT_STALL_BOUND_MS = 20_000;

  // LeaderState.restart stops this appender; it must not run on the appender's own threads.
  private static final ExecutorService RESTARTER =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "fencekeeper-appender-restarter");
            t.setDaemon(true);
            return t;
          });

  private static final Map<String, AtomicLong> RESTARTS = new ConcurrentHashMap<>();

  private final FollowerStall stall;
  private final AtomicBoolean restartRequested = new AtomicBoolean();

  public RecoveringLogAppender(
      RaftServer.Division server, LeaderState leaderState, FollowerInfo follower, long stallMs) {
    super(server, leaderState, follower);
    this.stall = new FollowerStall(TimeUnit.MILLISECONDS.toNanos(stallMs));
  }

  /**
   * How many times leader {@code nodeId} restarted an appender in this process because a follower
   * was stuck.
   */
  public static long restartsBy(String nodeId) {
    AtomicLong count = RESTARTS.get(nodeId);
    return count == null ? 0 : count.get();
  }

  @Override
  protected long getNextIndexForInconsistency(long requestFirstIndex, long replyNextIndex) {
    FollowerInfo follower = getFollower();
    FollowerStall.Verdict verdict =
        stall.onInconsistency(
            System.nanoTime(),
            follower.getMatchIndex(),
            replyNextIndex,
            getRaftLog().getNextIndex());
    if (verdict == FollowerStall.Verdict.RESTART) {
      requestRestart(stall.reason());
    }
    return super.getNextIndexForInconsistency(requestFirstIndex, replyNextIndex);
  }

  private void requestRestart(String reason) {
    if (!restartRequested.compareAndSet(false, true)) {
      return;
    }
    String leaderId = getServer().getId().toString();
    LOG.warn(
        "{}: restarting the log appender of follower {}: {}; its replacement starts from fresh"
            + " indexes (docs/ratis-workarounds.md)",
        leaderId,
        getFollowerId(),
        reason);
    RESTARTS.computeIfAbsent(leaderId, id -> new AtomicLong()).incrementAndGet();
    RESTARTER.execute(
        () -> {
          try {
            getLeaderState().restart(this);
          } catch (RuntimeException e) {
            LOG.warn("{}: restarting the log appender of {} failed", leaderId, getFollowerId(), e);
          }
        });
  }
}
