package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.metrics.NodeMetric;
import dev.fencekeeper.metrics.TlsListener;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.RaftConfig;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Properties;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A TLS node reloads its certificate (what SIGHUP does): new connections to every TLS port it has
 * (Raft, client, JSON gateway) get the new one, each listener's expiry gauge follows it, and files
 * that are wrong change nothing.
 */
@Timeout(120)
class CertificateReloadTest {
  @TempDir Path dir;
  private FencekeeperServer server;

  @AfterEach
  void stop() throws IOException {
    if (server != null) {
      server.close();
    }
  }

  // Guarantee: after reloadCertificates() (what SIGHUP runs) a new TLS connection, to the Raft
  // port, the client port or the JSON gateway, is served with the certificate now in tls.cert (its
  // serial; here one valid for 100 days instead of 10), each listener's expiry gauge says so, and
  // clients keep working; a key that does not fit is refused and every port keeps serving the last
  // good one.
  @Test
  void aReloadedCertificateServesNewConnections() throws Exception {
    Path certs = dir.resolve("certs");
    Certificates ca = Certificates.writeLocalSet(certs, Duration.ofDays(10));
    int port = LocalPorts.freeNodePort();
    Properties p = new Properties();
    p.setProperty("peers", "n1@127.0.0.1:" + port);
    p.setProperty("node.id", "n1");
    p.setProperty("storage.dir", dir.resolve("n1").toString());
    ClusterConfig node = withTls(ClusterConfig.fromProperties(p), certs, Certificates.NODE);
    server = FencekeeperServer.start(node);
    await().atMost(Duration.ofSeconds(60)).until(this::leads);

    int clientPort = server.clientPort().port();
    int gatewayPort = server.gateway().orElseThrow().port();
    List<Integer> ports = List.of(port, clientPort, gatewayPort);
    BigInteger first = certificate(certs.resolve("node.crt")).getSerialNumber();
    for (int served : ports) {
      assertThat(presented(certs, served).getSerialNumber()).as("port %d", served).isEqualTo(first);
      assertThat(daysLeft(presented(certs, served))).isBetween(9.9, 10.0);
    }
    for (TlsListener listener : TlsListener.values()) {
      assertThat(gaugeDays(listener)).as("%s", listener).isBetween(9.9, 10.0);
    }

    Instant now = Instant.now();
    ca.issue(
        certs,
        Certificates.NODE,
        Certificates.NODE_CN,
        now.minusSeconds(60),
        now.plus(Duration.ofDays(100)),
        java.util.List.of());
    BigInteger second = certificate(certs.resolve("node.crt")).getSerialNumber();
    assertThat(second).isNotEqualTo(first);
    assertThat(server.reloadCertificates()).contains("CN=" + Certificates.NODE_CN);

    for (int served : ports) {
      assertThat(presented(certs, served).getSerialNumber())
          .as("port %d", served)
          .isEqualTo(second);
      assertThat(daysLeft(presented(certs, served))).isBetween(99.9, 100.0);
    }
    for (TlsListener listener : TlsListener.values()) {
      assertThat(gaugeDays(listener)).as("%s", listener).isBetween(99.9, 100.0);
    }
    try (FencingClient client =
        FencingClient.connect(withTls(node, certs, Certificates.CLIENT), "reload")) {
      assertThat(client.acquireToken("r", Duration.ofSeconds(30), "reload").code())
          .isEqualTo(ResultCode.GRANTED);
    }

    // A key from another pair: refused; the 100-day certificate stays in force.
    Path otherCa = dir.resolve("other");
    Certificates.writeLocalSet(otherCa, Duration.ofDays(1));
    Files.copy(
        otherCa.resolve("node.key"),
        certs.resolve("node.key"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    assertThatThrownBy(server::reloadCertificates).hasMessageContaining("tls.");
    for (int served : ports) {
      assertThat(presented(certs, served).getSerialNumber())
          .as("port %d", served)
          .isEqualTo(second);
    }
    for (TlsListener listener : TlsListener.values()) {
      assertThat(gaugeDays(listener)).as("%s", listener).isBetween(99.9, 100.0);
    }
  }

  private double gaugeDays(TlsListener listener) {
    Object seconds =
        server
            .metrics()
            .registry()
            .getGauges()
            .get(NodeMetric.TLS_CERTIFICATE_EXPIRY.dropwizardName(List.of(listener.label())))
            .getValue();
    return ((Number) seconds).doubleValue() / 86400;
  }

  private static double daysLeft(X509Certificate certificate) {
    return Duration.between(Instant.now(), certificate.getNotAfter().toInstant()).toSeconds()
        / 86400.0;
  }

  /** The certificate the node presents to a new TLS connection from a client of the same CA. */
  private static X509Certificate presented(Path certs, int port) throws Exception {
    KeyStore keys = KeyStore.getInstance("PKCS12");
    keys.load(null, null);
    char[] password = "test".toCharArray();
    keys.setKeyEntry(
        "client",
        privateKey(certs.resolve("client.key")),
        password,
        new java.security.cert.Certificate[] {certificate(certs.resolve("client.crt"))});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keys, password);
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", certificate(certs.resolve("ca.crt")));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    try (SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      javax.net.ssl.SSLParameters alpn = socket.getSSLParameters();
      alpn.setApplicationProtocols(new String[] {"h2"}); // as a gRPC client offers
      socket.setSSLParameters(alpn);
      socket.startHandshake();
      return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }
  }

  private static X509Certificate certificate(Path file) throws Exception {
    try (InputStream in = Files.newInputStream(file)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  private static java.security.PrivateKey privateKey(Path file) throws Exception {
    String pem = Files.readString(file).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
    return java.security.KeyFactory.getInstance("EC")
        .generatePrivate(
            new java.security.spec.PKCS8EncodedKeySpec(java.util.Base64.getDecoder().decode(pem)));
  }

  private static ClusterConfig withTls(ClusterConfig config, Path dir, String name) {
    return config.withSecurity(config.security().withTls(Security.TlsFiles.inDirectory(dir, name)));
  }

  private boolean leads() {
    try {
      RaftServer.Division d = server.raftServer().getDivision(RaftConfig.groupId(server.config()));
      return d.getInfo().isLeader() && d.getInfo().isLeaderReady();
    } catch (IOException e) {
      return false;
    }
  }
}
