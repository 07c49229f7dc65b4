package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import picocli.CommandLine.Option;

/** The options every client verb shares: which cluster to talk to, and how to print the answer. */
public final class ClientOptions {
  private final CliContext context;

  @Option(
      names = "--peers",
      paramLabel = "HOST:PORT,...",
      description = "Cluster members (or ID@HOST:PORT,...). Default: $FENCEKEEPER_PEERS, else the"
          + " three nodes `up` starts (127.0.0.1:7301..7303, or from $FENCEKEEPER_BASE_PORT).")
  private String peers;

  @Option(names = "--json", description = "Print one JSON object whose `status` is the result code.")
  private boolean json;

  ClientOptions(CliContext context) {
    this.context = context;
  }

  boolean json() {
    return json;
  }

  ClusterConfig cluster() {
    return LocalDefaults.cluster(context, peers);
  }

  /** A client for the cluster; it contacts nodes only when the first call is made. */
  FencingClient connect() {
    return FencingClient.connect(cluster());
  }
}
