package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.tools.LocalClusterLayout.Node;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What `up` prepares and checks before it starts any node. */
class LocalClusterTest {
  @TempDir Path dir;

  // Guarantee: up writes one config per node: n1..n3 on consecutive ports, each with its own
  // storage dir.
  @Test
  void writesThreeNodeConfigs() {
    List<Node> nodes = LocalClusterLayout.prepare(dir, 17001);

    assertThat(nodes).extracting(Node::id).containsExactly("n1", "n2", "n3");
    for (int i = 0; i < 3; i++) {
      ClusterConfig config = ClusterConfig.load(nodes.get(i).configFile());
      assertThat(config.self()).isEqualTo(new PeerAddress("n" + (i + 1), "127.0.0.1", 17001 + i));
      assertThat(config.peers()).isEqualTo(ClusterConfig.local(17001).peers());
      assertThat(config.storageDir()).isEqualTo(dir.resolve("n" + (i + 1)));
      assertThat(config.metricsPort()).isEqualTo(17101 + i);
      assertThat(nodes.get(i).metricsUrl())
          .isEqualTo("http://127.0.0.1:" + (17101 + i) + "/metrics");
    }
  }

  // Guarantee: a node's own log files (node.log, logs/) are not Raft data, so they never block a
  // port change.
  @Test
  void logFilesAreNotRaftData() throws IOException {
    Node n1 = LocalClusterLayout.prepare(dir, 17001).get(0);
    Files.createDirectories(n1.storageDir().resolve("logs"));
    Files.writeString(n1.storageDir().resolve("logs/fencekeeper.log"), "a line\n");
    Files.writeString(n1.logFile(), "a line\n");

    Node moved = LocalClusterLayout.prepare(dir, 18001).get(0);

    assertThat(ClusterConfig.load(moved.configFile()).self().port()).isEqualTo(18001);
  }

  // Guarantee: a restart reuses the node's file as it is, so hand edits (limits) survive.
  @Test
  void keepsAMatchingHandEditedConfig() throws IOException {
    Path n1 = LocalClusterLayout.prepare(dir, 17001).get(0).configFile();
    Files.writeString(n1, Files.readString(n1).replace("lease.ttl.max=1h", "lease.ttl.max=2h"));

    LocalClusterLayout.prepare(dir, 17001);

    assertThat(Files.readString(n1)).contains("lease.ttl.max=2h");
  }

  // Guarantee: a config for other ports is rewritten while its node holds no data yet.
  @Test
  void rewritesAConfigForOtherPortsWithoutData() {
    LocalClusterLayout.prepare(dir, 17001);

    Node n1 = LocalClusterLayout.prepare(dir, 18001).get(0);

    assertThat(ClusterConfig.load(n1.configFile()).self().port()).isEqualTo(18001);
  }

  // Guarantee: existing Raft data is never pointed at other addresses; the refusal says how to
  // start it instead.
  @Test
  void refusesOtherPortsOverExistingData() throws IOException {
    Node n1 = LocalClusterLayout.prepare(dir, 17001).get(0);
    Files.createDirectories(n1.storageDir().resolve("acf99af9-54d0-3d39-9fdd-34737b033bbb"));

    assertThatThrownBy(() -> LocalClusterLayout.prepare(dir, 18001))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(n1.configFile().toString())
        .hasMessageContaining("--base-port 17001");
  }

  // Guarantee: up refuses (exit 2, before starting any node) when one of its ports is taken.
  @Test
  void upRefusesATakenPort() throws IOException {
    // Another process (a test in the other fork) may take one of the other ports between the probe
    // and up's own check; up then rightly names that port instead, and the case is tried again.
    for (int attempt = 1; ; attempt++) {
      try (ServerSocket taken = portWhoseNeighboursAreFree()) {
        int base = taken.getLocalPort() - 1; // n2's port is the taken one

        CliRun run =
            CliRun.run(dir, "up", "--data-dir", "data", "--base-port", Integer.toString(base));

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(2);
        assertThat(run.out()).doesNotContain("pid");
        String named = "port " + taken.getLocalPort() + " (n2) is already in use";
        if (attempt < 5 && !run.err().contains(named) && run.err().contains("is already in use")) {
          continue;
        }
        assertThat(run.err()).contains(named);
        return;
      }
    }
  }

  /**
   * n2's Raft port of a base whose other ports {@code up} binds (Raft, metrics, client, gateway)
   * are free as far as can be seen now, bound, so that {@code up} reports this port and not another
   * process's.
   */
  private static ServerSocket portWhoseNeighboursAreFree() throws IOException {
    int base = LocalPorts.freeBasePort(3, LocalClusterLayout.METRICS_PORT_OFFSET);
    ServerSocket taken = new ServerSocket();
    taken.bind(new InetSocketAddress(base + 1));
    return taken;
  }

  // Guarantee: relative paths resolve against the user's directory; env variables supply defaults
  // for scripts.
  @Test
  void defaultsComeFromFlagsThenEnvironment() {
    CliContext plain = new CliContext(System.out, System.err, Map.of(), dir);
    CliContext configured =
        new CliContext(
            System.out,
            System.err,
            Map.of("FENCEKEEPER_DATA_DIR", "elsewhere", "FENCEKEEPER_BASE_PORT", "17101"),
            dir);

    assertThat(LocalDefaults.dataDir(plain, null)).isEqualTo(dir.resolve("data"));
    assertThat(LocalDefaults.dataDir(plain, Path.of("mine"))).isEqualTo(dir.resolve("mine"));
    assertThat(LocalDefaults.dataDir(configured, null)).isEqualTo(dir.resolve("elsewhere"));
    assertThat(LocalDefaults.basePort(plain, null)).isEqualTo(ClusterConfig.DEFAULT_BASE_PORT);
    List<String> warnings = new ArrayList<>();
    assertThat(LocalDefaults.cluster(configured, null, null, warnings::add).peers())
        .isEqualTo(ClusterConfig.local(17101).peers());
    assertThat(LocalDefaults.cluster(configured, null, "127.0.0.1:9000", warnings::add).peers())
        .containsExactly(new PeerAddress("n1", "127.0.0.1", 9000));
    assertThat(warnings).singleElement().asString().contains("--peers", "deprecated");
  }

  // Guarantee: client verbs find the cluster by its client endpoints: --endpoints, else
  // $FENCEKEEPER_ENDPOINTS, before the deprecated --peers / $FENCEKEEPER_PEERS (each of which warns
  // once), else the cluster `up` starts.
  @Test
  void endpointsComeBeforeTheDeprecatedPeers() {
    List<String> warnings = new ArrayList<>();
    CliContext both =
        new CliContext(
            System.out,
            System.err,
            Map.of(
                "FENCEKEEPER_ENDPOINTS", "10.0.0.1:7501,10.0.0.2:7501",
                "FENCEKEEPER_PEERS", "n1@10.0.0.9:7301"),
            dir);
    assertThat(addresses(LocalDefaults.cluster(both, null, null, warnings::add)))
        .containsExactly("10.0.0.1:7501", "10.0.0.2:7501");
    assertThat(addresses(LocalDefaults.cluster(both, "127.0.0.1:7601", null, warnings::add)))
        .containsExactly("127.0.0.1:7601");
    assertThat(warnings).isEmpty();

    CliContext peersOnly =
        new CliContext(
            System.out, System.err, Map.of("FENCEKEEPER_PEERS", "n1@10.0.0.9:7301"), dir);
    assertThat(addresses(LocalDefaults.cluster(peersOnly, null, null, warnings::add)))
        .containsExactly("10.0.0.9:7501");
    assertThat(warnings).singleElement().asString().contains("$FENCEKEEPER_PEERS");

    CliContext plain = new CliContext(System.out, System.err, Map.of(), dir);
    assertThat(addresses(LocalDefaults.cluster(plain, null, null, warnings::add)))
        .containsExactly("127.0.0.1:7501", "127.0.0.1:7502", "127.0.0.1:7503");
  }

  private static List<String> addresses(ClusterConfig cluster) {
    return cluster.clientAddresses().stream().map(PeerAddress::address).toList();
  }
}
