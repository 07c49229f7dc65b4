package dev.fencekeeper.metrics;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The leader's latest view of its followers ({@link FollowerLag}), as its sampler last reported it,
 * and the per-follower gauges that export it, one series per peer id. A follower's series are
 * registered the first time a view names it and stay registered; each reads the latest view, so a
 * peer that is no follower of this node now (this node does not lead, or the peer left) has no
 * sample.
 */
final class FollowerGauges {
  private final NodeSeries series;
  private final Set<String> registered = ConcurrentHashMap.newKeySet();
  private volatile List<FollowerLag> latest = List.of();

  FollowerGauges(NodeSeries series) {
    this.series = series;
  }

  void sampled(List<FollowerLag> view) {
    latest = List.copyOf(view);
    for (FollowerLag f : latest) {
      if (registered.add(f.peer())) {
        register(f.peer());
      }
    }
  }

  List<FollowerLag> latest() {
    return latest;
  }

  private void register(String peer) {
    series.gauge(NodeMetric.FOLLOWER_MATCH_INDEX, of(peer, FollowerLag::matchIndex), peer);
    series.gauge(NodeMetric.FOLLOWER_LAG_ENTRIES, of(peer, FollowerLag::lagEntries), peer);
    series.gauge(NodeMetric.FOLLOWER_LAG_SECONDS, of(peer, FollowerLag::lagSeconds), peer);
    series.gauge(NodeMetric.FOLLOWER_LAGGING, of(peer, f -> f.lagging() ? 1 : 0), peer);
  }

  private Supplier<Number> of(String peer, Function<FollowerLag, Number> figure) {
    return () -> {
      for (FollowerLag f : latest) {
        if (f.peer().equals(peer)) {
          return figure.apply(f);
        }
      }
      return null;
    };
  }
}
