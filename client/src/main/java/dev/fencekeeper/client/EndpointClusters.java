package dev.fencekeeper.client;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Which cluster each endpoint a client was given belongs to, as each node said: endpoints given as
 * one cluster must all belong to the same. A node's cluster id is minted when the cluster first
 * forms and kept in every member's storage; two nodes reporting different ids are in different
 * clusters, whatever their configuration says.
 *
 * @param clusterIds by node id (as in the client's endpoints or peers), the cluster id each node
 *     that answered reported; empty for a node that knows none yet (it has not applied the entry
 *     the id is minted from)
 * @param unanswered by node id, why a node gave no answer within the time allowed
 */
public record EndpointClusters(Map<String, String> clusterIds, Map<String, String> unanswered) {
  /** The answers as given; both maps are copied. */
  public EndpointClusters {
    clusterIds = Map.copyOf(clusterIds);
    unanswered = Map.copyOf(unanswered);
  }

  /**
   * Whether no two nodes that answered report different cluster ids (true also when none reports
   * one yet; see {@link #clusterId()}).
   */
  public boolean oneCluster() {
    return byCluster().size() <= 1;
  }

  /** The one cluster id the nodes that know one report; empty if none does or they differ. */
  public Optional<String> clusterId() {
    Map<String, List<String>> byCluster = byCluster();
    return byCluster.size() == 1
        ? Optional.of(byCluster.keySet().iterator().next())
        : Optional.empty();
  }

  /** By cluster id, the node ids reporting it (sorted both ways); nodes that know none left out. */
  public Map<String, List<String>> byCluster() {
    return clusterIds.entrySet().stream()
        .filter(e -> !e.getValue().isEmpty())
        .collect(
            Collectors.groupingBy(
                Map.Entry::getValue,
                TreeMap::new,
                Collectors.mapping(
                    Map.Entry::getKey,
                    Collectors.collectingAndThen(
                        Collectors.toList(), l -> l.stream().sorted().toList()))));
  }

  /**
   * One line: {@code cluster <id>}, or which node belongs to which cluster when they differ, e.g.
   * {@code cluster ids differ, these nodes do not form one cluster: n1, n2 in 1f…; n3 in 7c…}.
   */
  public String describe() {
    Map<String, List<String>> byCluster = byCluster();
    if (byCluster.isEmpty()) {
      return "cluster not known: no node that answered knows its cluster id yet";
    }
    if (byCluster.size() == 1) {
      return "cluster " + byCluster.keySet().iterator().next();
    }
    return "cluster ids differ, these nodes do not form one cluster: "
        + byCluster.entrySet().stream()
            .map(e -> String.join(", ", e.getValue()) + " in " + e.getKey())
            .collect(Collectors.joining("; "));
  }
}
