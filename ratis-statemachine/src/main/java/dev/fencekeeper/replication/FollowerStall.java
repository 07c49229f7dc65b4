package dev.fencekeeper.replication;

/**
 * Decides, from the INCONSISTENCY replies one follower sends the leader, when the leader's
 * bookkeeping for that follower can no longer recover by itself and has to start over. Pure: the
 * caller passes the clock and the indexes.
 *
 * <p>Ratis 3.3.0's gRPC log appender answers an INCONSISTENCY reply to a heartbeat by setting the
 * follower's next index to its match index + 1 whenever that is higher than what the follower asked
 * for, and while it backs off after errors every request it sends is a heartbeat. A follower whose
 * log is shorter than its match index (its storage was wiped, or the match index was advanced past
 * what it holds) then never receives an entry again. Two signs of that:
 *
 * <ul>
 *   <li><b>lost entries</b>: the follower asks for an index at or below its match index, i.e. it
 *       lacks entries the leader counts as replicated to it. Required on {@link
 *       #LOST_ENTRIES_REPLIES} replies in a row, so that one reply overtaken by a later success
 *       does not count;
 *   <li><b>stalled</b>: replies keep saying INCONSISTENCY, the match index has not moved for the
 *       bound, and the leader's log holds entries past it.
 * </ul>
 *
 * Either way the answer is {@link Verdict#RESTART}: a new appender starts from fresh bookkeeping
 * (match index unknown, next index from the start), and the follower's replies lead it to the
 * entries or the snapshot the follower needs.
 */
public final class FollowerStall {
  /** Consecutive replies showing lost entries before a restart. */
  public static final int LOST_ENTRIES_REPLIES = 2;

  /** What to do after a reply. */
  public enum Verdict {
    KEEP,
    RESTART
  }

  private final long stallBoundNanos;
  private long observedMatchIndex = Long.MIN_VALUE;
  private long stalledSinceNanos;
  private long lastReplyNanos;
  private int lostEntriesReplies;
  private String reason = "";

  /**
   * @param stallBoundNanos how long the match index may stay put, while the follower answers
   *     INCONSISTENCY and the leader's log is ahead of it, before a restart
   */
  public FollowerStall(long stallBoundNanos) {
    if (stallBoundNanos <= 0) {
      throw new IllegalArgumentException("stall bound must be positive: " + stallBoundNanos);
    }
    this.stallBoundNanos = stallBoundNanos;
  }

  /**
   * One INCONSISTENCY reply from the follower.
   *
   * @param nowNanos a monotonic clock
   * @param matchIndex the leader's match index for the follower (-1: none yet)
   * @param replyNextIndex the next index the follower asked for
   * @param leaderNextIndex the index the leader's log will write next
   */
  public synchronized Verdict onInconsistency(
      long nowNanos, long matchIndex, long replyNextIndex, long leaderNextIndex) {
    boolean newRun =
        matchIndex != observedMatchIndex || nowNanos - lastReplyNanos > stallBoundNanos;
    if (newRun) {
      observedMatchIndex = matchIndex;
      stalledSinceNanos = nowNanos;
      lostEntriesReplies = 0;
    }
    lastReplyNanos = nowNanos;
    if (matchIndex >= 0 && replyNextIndex >= 0 && replyNextIndex <= matchIndex) {
      lostEntriesReplies++;
      if (lostEntriesReplies >= LOST_ENTRIES_REPLIES) {
        reason =
            "it asks for index "
                + replyNextIndex
                + " but the leader counts it as holding up to "
                + matchIndex
                + " (its log was lost or cut short)";
        return Verdict.RESTART;
      }
    } else {
      lostEntriesReplies = 0;
    }
    long stalledNanos = nowNanos - stalledSinceNanos;
    if (stalledNanos >= stallBoundNanos && leaderNextIndex > matchIndex + 1) {
      reason =
          "its match index stayed at "
              + matchIndex
              + " for "
              + stalledNanos / 1_000_000
              + " ms of INCONSISTENCY replies while the leader's log reached "
              + (leaderNextIndex - 1);
      return Verdict.RESTART;
    }
    return Verdict.KEEP;
  }

  /** Why the last {@link Verdict#RESTART} was given, for the log. */
  public synchronized String reason() {
    return reason;
  }
}
