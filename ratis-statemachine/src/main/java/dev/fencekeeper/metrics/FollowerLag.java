package dev.fencekeeper.metrics;

/**
 * How far one follower trails the leader, as the leader sees it.
 *
 * @param peer the follower's id
 * @param matchIndex the last log index the leader knows the follower holds
 * @param lagEntries how many of the leader's log entries the follower does not hold yet
 * @param lagSeconds how long the follower has been behind without its match index advancing; 0
 *     while it holds the leader's whole log
 * @param lagging whether {@code lagSeconds} has passed the bound ({@code health.max-follower-lag})
 */
public record FollowerLag(
    String peer, long matchIndex, long lagEntries, double lagSeconds, boolean lagging) {}
