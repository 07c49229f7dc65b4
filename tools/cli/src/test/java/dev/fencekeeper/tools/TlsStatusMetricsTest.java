package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.RaftConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code status} and {@code metrics} against a three-node mutual-TLS cluster whose nodes serve
 * metrics: TLS from $FENCEKEEPER_TLS_CERTS or the flags (the flags win), {@code metrics --node}
 * through TLS, and {@code status} reporting the nodes that answer while one does not.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TlsStatusMetricsTest {
  @TempDir static Path dir;
  private Path certs;
  private Path foreign;
  private String peers;
  private final List<FencekeeperServer> servers = new ArrayList<>();

  @BeforeAll
  void start() throws IOException {
    certs = dir.resolve("certs");
    Certificates.writeLocalSet(certs, Duration.ofDays(1));
    foreign = dir.resolve("foreign");
    Certificates.writeLocalSet(foreign, Duration.ofDays(1));
    Properties p = new Properties();
    p.setProperty(
        "peers",
        "n1@127.0.0.1:"
            + LocalPorts.freeNodePort()
            + ",n2@127.0.0.1:"
            + LocalPorts.freeNodePort()
            + ",n3@127.0.0.1:"
            + LocalPorts.freeNodePort());
    p.setProperty("authz.admins", Certificates.ADMIN_CN);
    p.setProperty("authz.nodes", Certificates.NODE_CN);
    ClusterConfig cluster = ClusterConfig.fromProperties(p);
    peers = String.join(",", cluster.peers().stream().map(PeerAddress::toString).toList());
    // A node's ports are bound only when it starts: a metrics port picked free before then must
    // not be one of them.
    Set<Integer> taken = new HashSet<>();
    for (PeerAddress peer : cluster.peers()) {
      taken.addAll(
          List.of(
              peer.port(),
              peer.port() + ClusterConfig.CLIENT_PORT_OFFSET,
              peer.port() + ClusterConfig.HTTP_PORT_OFFSET));
    }
    for (PeerAddress peer : cluster.peers()) {
      int metricsPort;
      do {
        metricsPort = LocalPorts.freePort();
      } while (!taken.add(metricsPort));
      ClusterConfig node =
          cluster
              .withSecurity(
                  cluster
                      .security()
                      .withTls(Security.TlsFiles.inDirectory(certs, Certificates.NODE)))
              .withNodeId(peer.id())
              .withStorageDir(dir.resolve(peer.id()))
              .withMetricsPort(metricsPort);
      servers.add(FencekeeperServer.start(node));
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> servers.stream().anyMatch(this::leads));
  }

  @AfterAll
  void stop() throws IOException {
    for (FencekeeperServer s : servers) {
      s.close();
    }
  }

  private Map<String, String> tlsEnv() {
    return Map.of(ClientOptions.ENV_TLS_CERTS, certs.toString());
  }

  // Guarantee: $FENCEKEEPER_TLS_CERTS alone turns TLS on for a client verb; without it (and
  // without flags) the verb talks plaintext and the TLS cluster refuses it.
  @Test
  void tlsFromTheEnvironment() throws IOException {
    CliRun withEnv = CliRun.run(tlsEnv(), dir, "status", "--json", "--peers", peers);
    assertThat(withEnv.exitCode()).as(withEnv.toString()).isZero();
    JsonNode json = CliRun.json(withEnv);
    for (JsonNode node : json.get("nodes")) {
      assertThat(node.get("role").asText()).as(withEnv.toString()).isNotEqualTo("unreachable");
    }
    CliRun write =
        CliRun.run(tlsEnv(), dir, "lease", "acquire", "env-tls", "--ttl", "30s", "--peers", peers);
    assertThat(write.exitCode()).as(write.toString()).isZero();

    CliRun plain = CliRun.run(dir, "status", "--json", "--timeout", "3s", "--peers", peers);
    assertThat(plain.exitCode()).as(plain.toString()).isEqualTo(ExitCode.UNAVAILABLE.code());
  }

  // Guarantee: flags win over the environment: --no-tls talks plaintext (refused), and --tls
  // --certs uses the directory given (here another CA's, refused) instead of the environment's.
  @Test
  void flagsWinOverTheEnvironment() {
    CliRun noTls =
        CliRun.run(
            tlsEnv(), dir, "status", "--json", "--timeout", "3s", "--no-tls", "--peers", peers);
    assertThat(noTls.exitCode()).as(noTls.toString()).isEqualTo(ExitCode.UNAVAILABLE.code());
    CliRun otherCerts =
        CliRun.run(
            tlsEnv(),
            dir,
            "status",
            "--json",
            "--timeout",
            "3s",
            "--tls",
            "--certs",
            foreign.toString(),
            "--peers",
            peers);
    // Guarantee: when every node refuses the client's TLS handshake (here: a certificate of
    // another CA), status says so and exits PERMISSION_DENIED, not "no leader known".
    assertThat(otherCerts.exitCode())
        .as(otherCerts.toString())
        .isEqualTo(ExitCode.PERMISSION_DENIED.code());
    assertThat(otherCerts.out())
        .contains("\"status\":\"PERMISSION_DENIED\"")
        .contains("nothing was applied");
    CliRun certsWithoutTls =
        CliRun.run(
            tlsEnv(), dir, "status", "--no-tls", "--certs", certs.toString(), "--peers", peers);
    assertThat(certsWithoutTls.exitCode()).isEqualTo(ExitCode.USAGE.code());
  }

  // Guarantee: metrics --node finds the node through the cluster's TLS settings and fetches its
  // metrics.
  @Test
  void metricsOfANamedNodeUnderTls() throws IOException {
    CliRun run = CliRun.run(tlsEnv(), dir, "metrics", "--node", "n2", "--json", "--peers", peers);
    assertThat(run.exitCode()).as(run.toString()).isZero();
    JsonNode json = CliRun.json(run);
    assertThat(json.get("node").asText()).isEqualTo("n2");
    assertThat(json.get("samples").size()).isPositive();
  }

  // Guarantee: status gives every node --timeout to answer (not a fixed second) and reports the
  // nodes that answered, with the silent one shown unreachable and why, within --timeout of
  // connecting to the others. The
  // silent member accepts connections and never answers, as a node stalled under load would.
  @Test
  void statusReportsTheOthersWhileOneNodeIsSilent() throws IOException {
    int silentPort = LocalPorts.freeNodePort();
    try (ServerSocket raft = new ServerSocket(silentPort, 50, InetAddress.getLoopbackAddress());
        ServerSocket client =
            new ServerSocket(
                silentPort + ClusterConfig.CLIENT_PORT_OFFSET,
                50,
                InetAddress.getLoopbackAddress())) {
      String withSilent = peers + ",n4@127.0.0.1:" + silentPort;
      long started = System.nanoTime();
      CliRun run = CliRun.run(tlsEnv(), dir, "status", "--timeout", "4s", "--peers", withSilent);
      Duration took = Duration.ofNanos(System.nanoTime() - started);
      assertThat(run.exitCode()).as(run.toString()).isZero();
      assertThat(run.out())
          .as(run.toString())
          .contains("n4 unreachable: no answer within 3700ms")
          .contains("leader n");
      for (String id : List.of("n1", "n2", "n3")) {
        assertThat(run.out().lines().filter(l -> l.startsWith(id + " ")))
            .as(run.toString())
            .singleElement()
            .asString()
            .doesNotContain("unreachable");
      }
      // --timeout counts from when the connections are set up: a majority of them here, the TLS
      // handshakes with the live nodes, well within a second; the silent node must not hold that
      // up (waiting for it too, status took 7.8 s).
      assertThat(took).isLessThan(Duration.ofSeconds(5));

      CliRun json =
          CliRun.run(tlsEnv(), dir, "status", "--json", "--timeout", "2s", "--peers", withSilent);
      assertThat(json.exitCode()).as(json.toString()).isZero();
      JsonNode n4 = CliRun.json(json).get("nodes").get(3);
      assertThat(n4.get("role").asText()).isEqualTo("unreachable");
      assertThat(n4.get("error").asText()).isEqualTo("no answer within 1700ms");
    }
  }

  private boolean leads(FencekeeperServer s) {
    try {
      RaftServer.Division d = s.raftServer().getDivision(RaftConfig.groupId(s.config()));
      return d.getInfo().isLeader() && d.getInfo().isLeaderReady();
    } catch (IOException e) {
      return false;
    }
  }
}
