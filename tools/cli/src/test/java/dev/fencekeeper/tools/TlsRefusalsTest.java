package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.metrics.NodeMetric;
import dev.fencekeeper.server.FencekeeperServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Properties;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A TLS node tells what its handshakes refuse: each refusal on the Raft port, the client port and
 * the JSON gateway is counted by listener and reason and logged at WARN with the remote address and
 * the cause.
 */
@Timeout(120)
class TlsRefusalsTest {
  @TempDir Path dir;
  private FencekeeperServer server;
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();
  private final Logger refusals = (Logger) LoggerFactory.getLogger("dev.fencekeeper.metrics");

  @AfterEach
  void stop() throws IOException {
    refusals.detachAppender(log);
    if (server != null) {
      server.close();
    }
  }

  // Guarantee: a client certificate that has expired, one from a CA the node does not trust, and
  // no client certificate at all are each refused in the handshake, counted in
  // fencekeeper_tls_handshakes_refused_total under its listener (raft, client, http) and reason
  // (expired, untrusted, no_certificate), and logged at WARN naming the port and the remote
  // address; on each port the first refusal is logged, the next ones within 10 s only counted.
  @Test
  void refusedHandshakesAreCountedByListenerAndReasonAndLogged() throws Exception {
    Path certs = dir.resolve("certs");
    Certificates ca = Certificates.writeLocalSet(certs, Duration.ofDays(10));
    Instant now = Instant.now();
    ca.issue(
        certs, "expired", Certificates.CLIENT_CN, now.minusSeconds(7200), now.minusSeconds(60));
    Path foreign = dir.resolve("foreign");
    Certificates.writeLocalSet(foreign, Duration.ofDays(10));
    int port = LocalPorts.freeNodePort();
    Properties p = new Properties();
    p.setProperty("peers", "n1@127.0.0.1:" + port);
    p.setProperty("node.id", "n1");
    p.setProperty("storage.dir", dir.resolve("n1").toString());
    ClusterConfig node = ClusterConfig.fromProperties(p);
    node = node.withSecurity(node.security().withTls(Security.TlsFiles.inDirectory(certs, "node")));
    log.start();
    refusals.addAppender(log);
    server = FencekeeperServer.start(node);

    int clientPort = server.clientPort().port();
    int gatewayPort = server.gateway().orElseThrow().port();
    for (int target : List.of(port, clientPort, gatewayPort)) {
      assertThat(handshake(certs, keys(certs, "expired"), target)).as("expired").isFalse();
      assertThat(handshake(certs, keys(foreign, Certificates.CLIENT), target)).isFalse();
      assertThat(handshake(certs, null, target)).as("no certificate").isFalse();
      assertThat(handshake(certs, keys(certs, Certificates.CLIENT), target)).isTrue();
    }

    for (String listener : List.of("raft", "client", "http")) {
      for (String reason : List.of("expired", "untrusted", "no_certificate")) {
        await()
            .atMost(Duration.ofSeconds(10))
            .untilAsserted(
                () -> assertThat(refused(listener, reason)).as(listener + " " + reason).isOne());
      }
      assertThat(refused(listener, "other")).isZero();
      assertThat(refused(listener, "not_tls")).isZero();
    }
    List<String> warnings =
        log.list.stream()
            .filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
            .map(ILoggingEvent::getFormattedMessage)
            .filter(m -> m.startsWith("TLS: "))
            .toList();
    // The first refusal on each port, the expired certificate; the others within 10 s are counted.
    assertThat(warnings).hasSize(3);
    assertThat(warnings.get(0))
        .startsWith("TLS: the raft port refused a connection from /127.0.0.1:")
        .contains("its certificate has expired");
    assertThat(warnings.get(1))
        .startsWith("TLS: the client port refused a connection from /127.0.0.1:")
        .contains("its certificate has expired");
    assertThat(warnings.get(2))
        .startsWith("TLS: the http port refused a connection from /127.0.0.1:")
        .contains("its certificate has expired");
  }

  private long refused(String listener, String reason) {
    return server
        .metrics()
        .registry()
        .getCounters()
        .get(NodeMetric.TLS_HANDSHAKES_REFUSED.dropwizardName(List.of(listener, reason)))
        .getCount();
  }

  /**
   * Whether a TLS connection with {@code keys} (null: no client certificate) to {@code port} gets
   * through: a node that refuses the client's certificate says so after the client's side of the
   * handshake, so one byte is written and read back (or the connection ends).
   */
  private static boolean handshake(Path certs, KeyManager[] keys, int port) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", certificate(certs.resolve("ca.crt")));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(keys, tmf.getTrustManagers(), null);
    try (SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(5_000);
      javax.net.ssl.SSLParameters alpn = socket.getSSLParameters();
      alpn.setApplicationProtocols(new String[] {"h2", "http/1.1"});
      socket.setSSLParameters(alpn);
      socket.startHandshake();
      // An HTTP/1.1 request line for the gateway; the gRPC ports answer it with an HTTP/2 error.
      socket.getOutputStream().write("GET /v1/node/status HTTP/1.1\r\n\r\n".getBytes());
      socket.getOutputStream().flush();
      return socket.getInputStream().read() >= 0;
    } catch (IOException refused) {
      return false;
    }
  }

  private static KeyManager[] keys(Path certs, String name) throws Exception {
    KeyStore keys = KeyStore.getInstance("PKCS12");
    keys.load(null, null);
    char[] password = "test".toCharArray();
    keys.setKeyEntry(
        name,
        privateKey(certs.resolve(name + ".key")),
        password,
        new java.security.cert.Certificate[] {certificate(certs.resolve(name + ".crt"))});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keys, password);
    return kmf.getKeyManagers();
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
}
