package dev.fencekeeper.tools;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.proto.FollowerProgress;
import dev.fencekeeper.proto.NodeInfo;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The leader's view of its followers ({@link NodeInfo#getFollowersList()}) as the {@code MATCH} and
 * {@code LAG} columns, the lines that name lagging followers, and the {@code --json} fields that
 * {@code status} and {@code members list} share. A node the leader does not report on (the leader
 * itself, or any node while no leader answered) shows {@code -} and has no such fields.
 */
final class FollowerLagColumns {
  static final String MATCH = "MATCH";
  static final String LAG = "LAG";

  private final Map<String, FollowerProgress> byId = new LinkedHashMap<>();

  /**
   * @param leaderInfo the leader's self-description; null when no leader answered
   */
  FollowerLagColumns(NodeInfo leaderInfo) {
    if (leaderInfo != null) {
      for (FollowerProgress f : leaderInfo.getFollowersList()) {
        byId.put(f.getId(), f);
      }
    }
  }

  /**
   * The leader's view, asked of {@code leaderId} over {@code admin}'s connections (set up already,
   * so within the verb's deadline); every cell {@code -} when there is no leader or it does not
   * answer within the cluster's request timeout (the rest of the report does not depend on it).
   */
  static FollowerLagColumns askLeader(FencingAdmin admin, ClusterConfig cluster, String leaderId) {
    if (leaderId.isEmpty()) {
      return new FollowerLagColumns(null);
    }
    try {
      return new FollowerLagColumns(Wire.nodeInfo(admin, leaderId, cluster.requestTimeout()));
    } catch (RuntimeException e) {
      return new FollowerLagColumns(null);
    }
  }

  String match(String id) {
    FollowerProgress f = byId.get(id);
    return f == null ? "-" : Long.toString(f.getMatchIndex());
  }

  /** Entries and seconds behind, e.g. {@code 412/12.4s}; {@code 0/0.0s} when caught up. */
  String lag(String id) {
    FollowerProgress f = byId.get(id);
    return f == null ? "-" : f.getLagEntries() + "/" + seconds(f.getLagSeconds()) + "s";
  }

  /** One line per lagging follower, for after the table. */
  List<String> laggingLines() {
    return byId.values().stream()
        .filter(FollowerProgress::getLagging)
        .map(
            f ->
                f.getId()
                    + " lagging: "
                    + f.getLagEntries()
                    + " entries behind the leader (match index "
                    + f.getMatchIndex()
                    + "), not advancing for "
                    + seconds(f.getLagSeconds())
                    + "s (past the leader's health.max-follower-lag)")
        .toList();
  }

  /** Adds the follower's fields to its JSON object, when the leader reports on it. */
  void json(String id, ObjectNode node) {
    FollowerProgress f = byId.get(id);
    if (f != null) {
      node.put("matchIndex", f.getMatchIndex());
      node.put("lagEntries", f.getLagEntries());
      node.put("lagSeconds", f.getLagSeconds());
      node.put("lagging", f.getLagging());
    }
  }

  /** Adds {@code "lagging": [ids]} to the report's JSON object. */
  void jsonSummary(ObjectNode o) {
    ArrayNode lagging = o.putArray("lagging");
    byId.values().stream()
        .filter(FollowerProgress::getLagging)
        .forEach(f -> lagging.add(f.getId()));
  }

  private static String seconds(double s) {
    return String.format(Locale.ROOT, "%.1f", s);
  }
}
