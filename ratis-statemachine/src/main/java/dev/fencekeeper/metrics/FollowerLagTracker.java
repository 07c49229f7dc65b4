package dev.fencekeeper.metrics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Tells, from samples of the leader's view of its followers, how long each follower has been behind
 * without advancing. Ratis gives the leader only each follower's match index; whether that index
 * still moves, and since when it has not, only shows across samples.
 *
 * <p>A follower counts as advancing when a sample finds it holding the leader's whole log or a
 * higher match index than the sample before (a lower one too: it restarted on a shorter log, or a
 * new leader started its count again). Its lag in time is how long ago the last such sample was,
 * while the latest sample finds it behind; the truth lies within one sampling period of that. A
 * follower that keeps advancing, however far behind, is not lagging: it is catching up, and its lag
 * in entries says how far it has to go.
 *
 * <p>Not thread-safe: one sampler feeds it, and readers get {@link #view} copies.
 */
public final class FollowerLagTracker {
  private final long maxLagNanos;
  private final Map<String, Progress> followers = new TreeMap<>();

  private record Progress(long matchIndex, long leaderLastIndex, long advancedAtNanos) {}

  /**
   * @param maxLag how long a follower may be behind without advancing before it counts as lagging
   */
  public FollowerLagTracker(Duration maxLag) {
    if (maxLag.isNegative() || maxLag.isZero()) {
      throw new IllegalArgumentException("maxLag must be positive: " + maxLag);
    }
    this.maxLagNanos = maxLag.toNanos();
  }

  /**
   * One sample of one follower: at {@code nowNanos} (a monotonic clock), the leader knows the
   * follower holds its log up to {@code matchIndex}, and its own log ends at {@code
   * leaderLastIndex}.
   */
  public void sample(long nowNanos, String peer, long matchIndex, long leaderLastIndex) {
    Progress before = followers.get(peer);
    boolean advanced =
        before == null || matchIndex >= leaderLastIndex || matchIndex != before.matchIndex();
    followers.put(
        peer,
        new Progress(matchIndex, leaderLastIndex, advanced ? nowNanos : before.advancedAtNanos()));
  }

  /** Forgets every follower not in {@code peers}: they left the configuration. */
  public void retainOnly(Collection<String> peers) {
    followers.keySet().retainAll(peers);
  }

  /** Forgets every follower: this node stopped leading, and a new term starts the count again. */
  public void clear() {
    followers.clear();
  }

  /** Every follower sampled, by id, as of {@code nowNanos}. */
  public List<FollowerLag> view(long nowNanos) {
    List<FollowerLag> view = new ArrayList<>(followers.size());
    followers.forEach(
        (peer, p) -> {
          long lagEntries = Math.max(0, p.leaderLastIndex() - p.matchIndex());
          long behindNanos = lagEntries == 0 ? 0 : Math.max(0, nowNanos - p.advancedAtNanos());
          view.add(
              new FollowerLag(
                  peer, p.matchIndex(), lagEntries, behindNanos / 1e9, behindNanos > maxLagNanos));
        });
    return view;
  }
}
