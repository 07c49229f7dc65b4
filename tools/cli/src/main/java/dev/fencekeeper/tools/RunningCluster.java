package dev.fencekeeper.tools;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The running cluster a tool verb ({@code bench}, {@code drill}) works against instead of starting
 * its own: {@code --endpoints} (the nodes' client ports), or the deprecated {@code --peers} (Raft
 * addresses, with a one-line warning), named as client verbs name them.
 */
public final class RunningCluster {
  private RunningCluster() {}

  /**
   * The cluster {@code endpointsFlag} or {@code peersFlag} names; empty when neither is given.
   *
   * @throws ConfigException if both are given, or the one given does not parse (a Raft address in
   *     {@code --endpoints} is refused naming the client port to give)
   */
  public static Optional<ClusterConfig> of(
      String endpointsFlag, String peersFlag, Consumer<String> warnings) {
    if (endpointsFlag == null && peersFlag == null) {
      return Optional.empty();
    }
    if (endpointsFlag != null && peersFlag != null) {
      throw new ConfigException("--endpoints and --peers name the cluster twice; give --endpoints");
    }
    if (endpointsFlag != null) {
      return Optional.of(LocalDefaults.endpoints("--endpoints", endpointsFlag));
    }
    warnings.accept(LocalDefaults.deprecation("--peers", "--endpoints"));
    return Optional.of(LocalDefaults.peers("--peers", peersFlag));
  }
}
