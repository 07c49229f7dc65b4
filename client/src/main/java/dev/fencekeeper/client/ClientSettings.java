package dev.fencekeeper.client;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.CommonPool;
import dev.fencekeeper.config.PropertyNames;
import dev.fencekeeper.config.Security;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
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

  /** Ratis's gRPC parameters: the cluster's own TLS, or one from the builder's managers. */
  static org.apache.ratis.conf.Parameters ratisParameters(
      ClusterConfig effective, FencingClient.Builder b) {
    javax.net.ssl.KeyManager keyManager = b.keyManager;
    javax.net.ssl.TrustManager trustManager = b.trustManager;
    if (keyManager == null) {
      return effective.ratisParameters();
    }
    org.apache.ratis.conf.Parameters p = new org.apache.ratis.conf.Parameters();
    org.apache.ratis.grpc.GrpcConfigKeys.TLS.setConf(
        p, new org.apache.ratis.grpc.GrpcTlsConfig(keyManager, trustManager, true));
    return p;
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
