package dev.fencekeeper.tools;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Optional;

/** Names the peers whose host names do not resolve, to explain a cluster that did not answer. */
final class PeerNames {
  private PeerNames() {}

  /** "cannot resolve host a.example, b.example", or empty when every peer's host resolves. */
  static Optional<String> unresolved(ClusterConfig cluster) {
    List<String> hosts =
        cluster.peers().stream()
            .map(PeerAddress::host)
            .distinct()
            .filter(host -> !resolves(host))
            .toList();
    return hosts.isEmpty()
        ? Optional.empty()
        : Optional.of(
            "cannot resolve host" + (hosts.size() > 1 ? "s " : " ") + String.join(", ", hosts));
  }

  private static boolean resolves(String host) {
    try {
      InetAddress.getAllByName(host);
      return true;
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
