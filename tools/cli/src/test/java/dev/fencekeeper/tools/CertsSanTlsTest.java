package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.RaftConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code certs --san} against a real TLS node reached by a name other than 127.0.0.1 or localhost:
 * gRPC checks the node's certificate against the address the client dialled, so the node is usable
 * by that name exactly when its certificate names it.
 */
class CertsSanTlsTest {
  /**
   * A loopback address that the default certificate does not name (all of 127/8 is loopback on
   * Linux).
   */
  private static final String HOST = "127.0.0.2";

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private final List<FencekeeperServer> servers = new ArrayList<>();

  @AfterEach
  void stop() throws IOException {
    for (FencekeeperServer server : servers) {
      server.close();
    }
  }

  // Guarantee: with --san naming the node's address a TLS client reaches it there; without, the
  // handshake fails and the verb answers PERMISSION_DENIED at once, naming the mismatch.
  @Test
  void aNodeIsReachableByTheNameItsCertificateCarries() throws IOException {
    assertThat(CliRun.run(dir, "certs", "named", "--san", HOST).exitCode()).isZero();
    assertThat(CliRun.run(dir, "certs", "unnamed").exitCode()).isZero();
    String named = startSingleNode("named", dir.resolve("named"));
    String unnamed = startSingleNode("unnamed", dir.resolve("unnamed"));

    CliRun reached =
        CliRun.run(
            dir, "lease", "acquire", "r", "--ttl", "30s", "--json", "--peers", named, "--tls",
            "--certs", "named");
    CliRun refused =
        CliRun.run(
            dir,
            "lease",
            "acquire",
            "r",
            "--ttl",
            "30s",
            "--json",
            "--timeout",
            "5s",
            "--peers",
            unnamed,
            "--tls",
            "--certs",
            "unnamed");

    assertThat(reached.exitCode()).as(reached.toString()).isZero();
    assertThat(JSON.readTree(reached.out()).get("status").asText()).isEqualTo("GRANTED");
    assertThat(refused.exitCode())
        .as(refused.toString())
        .isEqualTo(ExitCode.PERMISSION_DENIED.code());
    assertThat(JSON.readTree(refused.out()).get("status").asText()).isEqualTo("PERMISSION_DENIED");
    assertThat(refused.out()).contains("name mismatch", "nothing was applied");
  }

  // Guarantee: `certs DIR --add NAME --cn CN --san HOST` issues one more certificate from the CA
  // already in DIR, so a node added on a new address (the docs' "replace n3 by n4") is reachable
  // there by the clients that trust that CA, with the certificates they already have.
  @Test
  void aCertificateAddedFromTheSameCaNamesTheNewNodesAddress() throws IOException {
    assertThat(CliRun.run(dir, "certs", "cluster").exitCode()).isZero();
    CliRun added =
        CliRun.run(
            dir, "certs", "cluster", "--add", "n4", "--cn", Certificates.NODE_CN, "--san", HOST);
    assertThat(added.exitCode()).as(added.toString()).isZero();
    assertThat(added.out()).contains("n4.crt", "CN " + Certificates.NODE_CN, HOST);
    String n4 = startSingleNode("n4", dir.resolve("cluster"), "n4");

    CliRun reached =
        CliRun.run(
            dir, "lease", "acquire", "r", "--ttl", "30s", "--json", "--peers", n4, "--tls",
            "--certs", "cluster");

    assertThat(reached.exitCode()).as(reached.toString()).isZero();
    assertThat(JSON.readTree(reached.out()).get("status").asText()).isEqualTo("GRANTED");
  }

  private String startSingleNode(String id, Path certs) throws IOException {
    return startSingleNode(id, certs, Certificates.NODE);
  }

  /**
   * A one-node TLS cluster on HOST with the certificate {@code name} from {@code certs}; returns
   * its --peers.
   */
  private String startSingleNode(String id, Path certs, String name) throws IOException {
    String peers = HOST + ":" + LocalPorts.freeNodePort();
    Properties p = new Properties();
    p.setProperty("peers", "n1@" + peers);
    p.setProperty("authz.admins", Certificates.ADMIN_CN);
    p.setProperty("authz.nodes", Certificates.NODE_CN);
    ClusterConfig cluster = ClusterConfig.fromProperties(p);
    ClusterConfig node =
        cluster
            .withSecurity(cluster.security().withTls(Security.TlsFiles.inDirectory(certs, name)))
            .withNodeId("n1")
            .withStorageDir(dir.resolve(id + "-data"));
    FencekeeperServer server = FencekeeperServer.start(node);
    servers.add(server);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              try {
                return server
                    .raftServer()
                    .getDivision(RaftConfig.groupId(node))
                    .getInfo()
                    .isLeaderReady();
              } catch (IOException e) {
                return false;
              }
            });
    return peers;
  }
}
