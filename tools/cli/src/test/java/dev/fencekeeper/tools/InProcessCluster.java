package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.server.local.LocalCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Three real nodes in the test JVM on free loopback ports ({@link LocalCluster}'s in-process
 * flavour). The cluster keeps the default name, so the CLI's {@code --peers} (which cannot name a
 * cluster) reaches it.
 *
 * <p>The verb tests share one per test class: {@code @RegisterExtension static final
 * InProcessCluster cluster = InProcessCluster.perClass();} starts it before the class's first test,
 * with its data in a temporary directory ({@link #dataDir}), and stops it and deletes that
 * directory after the last. {@link #start} gives one whose data lives where the caller says, for
 * the caller to close.
 */
final class InProcessCluster implements AutoCloseable, BeforeAllCallback, AfterAllCallback {
  private final boolean withMetrics;
  private final boolean ownsDataDir;
  private final Properties properties = new Properties();
  private LocalCluster cluster;
  // The three members it started with; a node started to join is not one until it is added.
  private ClusterConfig config;
  private Path dataDir;

  private InProcessCluster(boolean withMetrics, boolean ownsDataDir) {
    this.withMetrics = withMetrics;
    this.ownsDataDir = ownsDataDir;
  }

  static InProcessCluster start(Path dataDir) throws IOException {
    InProcessCluster cluster = new InProcessCluster(false, false);
    cluster.startNodes(dataDir);
    return cluster;
  }

  /**
   * A cluster for {@code @RegisterExtension}: running from before the class's first test until
   * after its last.
   */
  static InProcessCluster perClass() {
    return new InProcessCluster(false, true);
  }

  /** As {@link #perClass()}, every node's config with {@code key=value} over the defaults. */
  static InProcessCluster perClassWith(String key, String value) {
    InProcessCluster cluster = new InProcessCluster(false, true);
    cluster.properties.setProperty(key, value);
    return cluster;
  }

  /** As {@link #perClass()}, each node also serving {@code /metrics} on a free port of its own. */
  static InProcessCluster perClassWithMetrics() {
    return new InProcessCluster(true, true);
  }

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    startNodes(
        Files.createTempDirectory(
            "fencekeeper-" + context.getRequiredTestClass().getSimpleName() + "-"));
  }

  @Override
  public void afterAll(ExtensionContext context) throws IOException {
    close();
    if (ownsDataDir && dataDir != null) {
      try (Stream<Path> paths = Files.walk(dataDir)) {
        for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(path);
        }
      }
    }
  }

  private void startNodes(Path dataDir) {
    this.dataDir = dataDir;
    this.cluster =
        LocalCluster.builder(dataDir).metricsPorts(withMetrics).properties(properties).start();
    this.config = cluster.config();
    try {
      awaitLeader();
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** Where the nodes keep their data, and the working directory of {@link #cli}. */
  Path dataDir() {
    return dataDir;
  }

  /** The --peers value that reaches this cluster. */
  String peers() {
    return config.peers().stream().map(PeerAddress::address).collect(Collectors.joining(","));
  }

  /** The --endpoints value that reaches this cluster: its nodes' client ports. */
  String endpoints() {
    return config.clientAddresses().stream()
        .map(PeerAddress::address)
        .collect(Collectors.joining(","));
  }

  ClusterConfig config() {
    return config;
  }

  /** The --peers value naming every member with its id: {@code n1@127.0.0.1:p1,...}. */
  String peersWithIds() {
    return config.peers().stream().map(PeerAddress::toString).collect(Collectors.joining(","));
  }

  /**
   * Starts a new node {@code id} on a free port without the group (as {@code server --join} does),
   * its peers being this cluster's plus itself; {@link #close} stops it too. Returns its address.
   */
  PeerAddress startJoining(String id) throws IOException {
    PeerAddress peer = new PeerAddress(id, "127.0.0.1", LocalPorts.freeNodePort());
    cluster.add(joiningConfig(peer).withStorageDir(dataDir.resolve(id)));
    cluster.start(id, true);
    return peer;
  }

  /** Stops node {@code id} (one this cluster started), as a crash or shutdown would. */
  void stopNode(String id) throws IOException {
    cluster.stop(id);
  }

  /** The config of new member {@code peer}: this cluster's peers plus it, with its node id set. */
  ClusterConfig joiningConfig(PeerAddress peer) {
    return ClusterConfig.forPeers(peersWithIds() + "," + peer).withNodeId(peer.id());
  }

  private void awaitLeader() {
    try (FencingClient client = FencingClient.connect(config)) {
      Awaitility.await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(100))
          .until(
              () ->
                  ClusterProbe.leader(ClusterProbe.probe(client, config, Duration.ofSeconds(1)))
                      .isPresent());
    }
  }

  @Override
  public void close() {
    if (cluster == null) {
      return;
    }
    try {
      cluster.close();
    } catch (RuntimeException e) {
      // Every other node is stopped already; the test's own outcome is what matters.
      System.err.println("closing a test node failed: " + e);
    }
  }

  /** Runs a CLI verb against this cluster (its {@code --peers} appended), in the data directory. */
  CliRun cli(String... args) {
    List<String> withPeers = new ArrayList<>(List.of(args));
    withPeers.add("--peers");
    withPeers.add(peers());
    return CliRun.run(dataDir, withPeers.toArray(String[]::new));
  }
}
