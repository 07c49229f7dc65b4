package dev.fencekeeper.tools;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import java.nio.file.Path;

/**
 * Where {@code up} puts the local cluster, and so where every client verb looks for it by default.
 * Each flag's default comes from an environment variable first, so a test (or a user with two
 * clusters) can run the README's commands verbatim against a cluster on other ports.
 */
final class LocalDefaults {
  static final String ENV_DATA_DIR = "FENCEKEEPER_DATA_DIR";
  static final String ENV_BASE_PORT = "FENCEKEEPER_BASE_PORT";
  static final String ENV_PEERS = "FENCEKEEPER_PEERS";
  static final String ENV_ENDPOINTS = "FENCEKEEPER_ENDPOINTS";
  static final String DEFAULT_DATA_DIR = "./data";

  private LocalDefaults() {}

  /**
   * {@code flag} if given, else $FENCEKEEPER_DATA_DIR, else ./data; absolute, against the user's
   * cwd.
   */
  static Path dataDir(CliContext context, Path flag) {
    Path dir = flag != null ? flag : Path.of(context.env(ENV_DATA_DIR, DEFAULT_DATA_DIR));
    return context.resolve(dir).toAbsolutePath();
  }

  /** {@code flag} if given, else $FENCEKEEPER_BASE_PORT, else 7301. */
  static int basePort(CliContext context, Integer flag) {
    if (flag != null) {
      return flag;
    }
    String text = context.env(ENV_BASE_PORT, null);
    if (text == null) {
      return ClusterConfig.DEFAULT_BASE_PORT;
    }
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new ConfigException(ENV_BASE_PORT + ": '" + text + "' is not a port number");
    }
  }

  /**
   * The cluster a client verb talks to: {@code --endpoints}, else {@code --peers}, else
   * $FENCEKEEPER_ENDPOINTS, else $FENCEKEEPER_PEERS, else the three nodes {@code up} starts (from
   * $FENCEKEEPER_BASE_PORT). Raft peer addresses are still taken from the two deprecated sources,
   * each time with a one-line warning on {@code warnings}.
   */
  static ClusterConfig cluster(
      CliContext context,
      String endpointsFlag,
      String peersFlag,
      java.util.function.Consumer<String> warnings) {
    java.util.Optional<ClusterConfig> named = RunningCluster.of(endpointsFlag, peersFlag, warnings);
    if (named.isPresent()) {
      return named.get();
    }
    String endpoints = context.env(ENV_ENDPOINTS, null);
    if (endpoints != null) {
      return endpoints(ENV_ENDPOINTS, endpoints);
    }
    String peers = context.env(ENV_PEERS, null);
    if (peers != null) {
      warnings.accept(deprecation("$" + ENV_PEERS, "$" + ENV_ENDPOINTS));
      return peers(ENV_PEERS, peers);
    }
    return ClusterConfig.local(basePort(context, null));
  }

  static String deprecation(String old, String replacement) {
    return "fencekeeper: warning: "
        + old
        + " (Raft addresses) is deprecated and will be removed; name the nodes' client ports with "
        + replacement
        + " HOST:PORT,... (by default each Raft port + "
        + ClusterConfig.CLIENT_PORT_OFFSET
        + ")";
  }

  static ClusterConfig endpoints(String source, String text) {
    try {
      return ClusterConfig.forEndpoints(text);
    } catch (ConfigException e) {
      throw new ConfigException(source + ": " + e.getMessage());
    }
  }

  static ClusterConfig peers(String source, String text) {
    try {
      return ClusterConfig.forPeers(text);
    } catch (ConfigException e) {
      throw new ConfigException(source + ": " + e.getMessage());
    }
  }

  /** {@code host:port,...} of the cluster's client ports, as $FENCEKEEPER_ENDPOINTS takes them. */
  static String endpointsValue(ClusterConfig cluster) {
    return cluster.clientAddresses().stream()
        .map(dev.fencekeeper.config.PeerAddress::address)
        .collect(java.util.stream.Collectors.joining(","));
  }
}
