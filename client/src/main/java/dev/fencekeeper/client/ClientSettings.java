package dev.fencekeeper.client;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.CommonPool;
import dev.fencekeeper.config.PropertyNames;
import dev.fencekeeper.config.Security;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What {@link FencingClient.Builder}'s settings make of a cluster description and TLS material. */
final class ClientSettings {
  private ClientSettings() {}

  private static final Logger LOG = LoggerFactory.getLogger(FencingClient.class);
  private static final AtomicBoolean commonPoolChecked = new AtomicBoolean();

  /** Warns once per process when the common pool runs a thread per stage. */
  static void warnOfCommonPool() {
    if (!commonPoolChecked.getAndSet(true)) {
      CommonPool.threadPerStageWarning().ifPresent(w -> LOG.warn("Slower than it could be: {}", w));
    }
  }

  static String defaultOwnerLabel() {
    String host = System.getenv().getOrDefault("HOSTNAME", "localhost");
    return host + ":" + ProcessHandle.current().pid();
  }

  /** The builder's cluster with its request timeout, cluster name and TLS files, where given. */
  static ClusterConfig effectiveConfig(FencingClient.Builder b) {
    ClusterConfig base =
        b.config != null
            ? b.config
            : b.endpoints != null
                ? ClusterConfig.forEndpoints(b.endpoints)
                : ClusterConfig.forPeers(b.peers);
    Duration requestTimeout = b.requestTimeout;
    String clusterName = b.clusterName;
    Security.TlsFiles tlsFiles = b.tlsFiles;
    if (requestTimeout != null || clusterName != null) {
      java.util.Properties p = base.toProperties();
      if (requestTimeout != null) {
        p.setProperty(PropertyNames.CLIENT_REQUEST_TIMEOUT, requestTimeout.toMillis() + "ms");
      }
      if (clusterName != null) {
        p.setProperty(PropertyNames.CLUSTER_NAME, clusterName);
      }
      base = ClusterConfig.fromProperties(p);
    }
    if (tlsFiles != null) {
      base = base.withSecurity(base.security().withTls(tlsFiles));
    }
    return base;
  }

  /**
   * The TLS context for the client ports: the builder's key and trust managers if given, else the
   * cluster's TLS files; null without TLS.
   */
  static SslContext sslContext(ClusterConfig effective, FencingClient.Builder b) {
    if (b.keyManager != null) {
      return ClientTls.fromManagers(b.keyManager, b.trustManager);
    }
    return sslContext(effective);
  }

  /** The TLS context for {@code config}'s TLS files; null without TLS. */
  static SslContext sslContext(ClusterConfig config) {
    Security.TlsFiles files = config.security().tls();
    return files == null ? null : ClientTls.fromFiles(files);
  }

  static Duration positive(String name, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, was " + d);
    }
    return d;
  }

  static javax.net.ssl.KeyManager keyManager(java.security.KeyStore keyStore, char[] password) {
    try {
      javax.net.ssl.KeyManagerFactory kmf =
          javax.net.ssl.KeyManagerFactory.getInstance(
              javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keyStore, password);
      return kmf.getKeyManagers()[0];
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot use the key stores for TLS: " + e.getMessage(), e);
    }
  }

  static javax.net.ssl.TrustManager trustManager(java.security.KeyStore trustStore) {
    try {
      javax.net.ssl.TrustManagerFactory tmf =
          javax.net.ssl.TrustManagerFactory.getInstance(
              javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trustStore);
      return tmf.getTrustManagers()[0];
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot use the key stores for TLS: " + e.getMessage(), e);
    }
  }
}
