package dev.fencekeeper.client;

import dev.fencekeeper.config.Security;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcSslContexts;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContextBuilder;

/**
 * The client's side of mutual TLS on the nodes' client ports: it presents its own certificate and
 * trusts the cluster's CA, from PEM files ({@code tls.cert}, {@code tls.key}, {@code tls.trust}) or
 * from key and trust managers the application made.
 */
final class ClientTls {
  private ClientTls() {}

  /** A context from the PEM files {@code files} names. */
  static SslContext fromFiles(Security.TlsFiles files) {
    try {
      return GrpcSslContexts.configure(SslContextBuilder.forClient())
          .keyManager(files.cert().toFile(), files.key().toFile())
          .trustManager(files.trust().toFile())
          .build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "cannot use the TLS files "
              + files.cert()
              + ", "
              + files.key()
              + " and "
              + files.trust()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** A context from the application's own managers. */
  static SslContext fromManagers(KeyManager keys, TrustManager trust) {
    try {
      return GrpcSslContexts.configure(SslContextBuilder.forClient())
          .keyManager(keys)
          .trustManager(trust)
          .build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "cannot use the key and trust managers for TLS: " + e.getMessage(), e);
    }
  }
}
