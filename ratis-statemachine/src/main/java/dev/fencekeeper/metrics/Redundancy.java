package dev.fencekeeper.metrics;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What the leader's {@code /health} adds when followers lag: the cluster still serves, but with
 * fewer up-to-date copies of its log than it has members, so one more failure can cost it its
 * majority, or a failover can elect a node that must first catch up.
 */
final class Redundancy {
  private Redundancy() {}

  /**
   * Null when no follower in {@code view} lags, else one line that names each lagging follower, for
   * after "ready; ".
   */
  static String degraded(List<FollowerLag> view, Duration maxLag) {
    List<FollowerLag> lagging = view.stream().filter(FollowerLag::lagging).toList();
    if (lagging.isEmpty()) {
      return null;
    }
    StringBuilder s = new StringBuilder("redundancy degraded: ");
    for (int i = 0; i < lagging.size(); i++) {
      FollowerLag f = lagging.get(i);
      s.append(i == 0 ? "" : "; ")
          .append("follower ")
          .append(f.peer())
          .append(" is ")
          .append(f.lagEntries())
          .append(f.lagEntries() == 1 ? " entry" : " entries")
          .append(" behind (match index ")
          .append(f.matchIndex())
          .append(") and has not advanced for ")
          .append(String.format(Locale.ROOT, "%.1f", f.lagSeconds()))
          .append("s");
    }
    return s.append(" (health.max-follower-lag ").append(seconds(maxLag)).append(")").toString();
  }

  private static String seconds(Duration d) {
    return d.toMillis() % 1000 == 0
        ? d.toSeconds() + "s"
        : String.format(Locale.ROOT, "%.3fs", d.toMillis() / 1000.0);
  }
}
