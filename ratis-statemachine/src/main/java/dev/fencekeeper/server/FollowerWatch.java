package dev.fencekeeper.server;

import dev.fencekeeper.metrics.FollowerLag;
import dev.fencekeeper.metrics.FollowerLagTracker;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiConsumer;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples, while this node leads, how far each follower trails it, every {@link #PERIOD}, and
 * reports the view ({@link FollowerLagTracker}) to {@code sink}; on any other node the view is
 * empty. Its own thread: a sample must not wait behind the leader's duties, which is when a stalled
 * follower matters most.
 *
 * <p>A node that does not lead reports the empty view once and sleeps until {@link #leaderChanged}:
 * Ratis tells every change of leader, to this node or away from it, after the node's role changed,
 * so the woken sample sees the new role. A follower therefore pays no wake-ups for a view it never
 * shows.
 *
 * <p>Ratis gives the leader's per-follower match indices only as an array, in the order of its log
 * appenders, and the followers' ids in the same order in the role info; a sample reads the ids
 * before and after the indices and is dropped when they differ (an appender was added, removed or
 * restarted in between), so no index is ever put on the wrong follower.
 */
final class FollowerWatch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FollowerWatch.class);

  static final Duration PERIOD = Duration.ofMillis(200);

  private final RaftServer server;
  private final RaftGroupId groupId;
  private final Duration maxLag;
  private final BiConsumer<List<FollowerLag>, Duration> sink;
  private final FollowerLagTracker tracker;
  private final ScheduledExecutorService timer;
  private final PollUntilSettled poll;
  private long leadingTerm = -1;

  FollowerWatch(
      String self,
      RaftServer server,
      RaftGroupId groupId,
      Duration maxLag,
      BiConsumer<List<FollowerLag>, Duration> sink) {
    this.server = server;
    this.groupId = groupId;
    this.maxLag = maxLag;
    this.sink = sink;
    this.tracker = new FollowerLagTracker(maxLag);
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "fencekeeper-follower-watch-" + self);
              t.setDaemon(true);
              return t;
            });
    this.poll = new PollUntilSettled(timer, PERIOD, this::sampleQuietly);
  }

  void start() {
    poll.start();
  }

  /** The leader this node knows of changed (to this node, away from it, or to none). */
  void leaderChanged() {
    poll.wake();
  }

  /** Whether to sample again after {@link #PERIOD}: while this node leads, or a sample failed. */
  private boolean sampleQuietly() {
    try {
      return sample();
    } catch (RuntimeException e) {
      LOG.debug("sampling the followers failed: {}", e.toString());
      return true;
    }
  }

  private boolean sample() {
    RaftServer.Division d;
    try {
      d = server.getDivision(groupId);
    } catch (IOException e) {
      d = null;
    }
    if (d == null || !d.getInfo().isLeader()) {
      leadingTerm = -1;
      tracker.clear();
      sink.accept(List.of(), maxLag);
      return false;
    }
    long term = d.getInfo().getCurrentTerm();
    if (term != leadingTerm) {
      leadingTerm = term;
      tracker.clear();
    }
    List<String> before = followerIds(d.getInfo().getRoleInfoProto());
    long[] match = d.getInfo().getFollowerMatchIndices();
    List<String> after = followerIds(d.getInfo().getRoleInfoProto());
    if (before == null || !before.equals(after) || before.size() != match.length) {
      return true; // the appenders changed while being read; the next sample will do
    }
    TermIndex last = d.getRaftLog().getLastEntryTermIndex();
    long lastIndex = last == null ? -1 : last.getIndex();
    long now = System.nanoTime();
    for (int i = 0; i < match.length; i++) {
      tracker.sample(now, before.get(i), match[i], lastIndex);
    }
    tracker.retainOnly(before);
    sink.accept(tracker.view(now), maxLag);
    return true;
  }

  private static List<String> followerIds(RoleInfoProto role) {
    if (!role.hasLeaderInfo()) {
      return null;
    }
    List<String> ids = new ArrayList<>();
    for (ServerRpcProto f : role.getLeaderInfo().getFollowerInfoList()) {
      ids.add(f.getId().getId().toStringUtf8());
    }
    return ids;
  }

  @Override
  public void close() {
    timer.shutdownNow();
    sink.accept(List.of(), maxLag);
  }
}
