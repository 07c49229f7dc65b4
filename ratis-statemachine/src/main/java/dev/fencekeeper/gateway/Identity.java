package dev.fencekeeper.gateway;

import dev.fencekeeper.clientport.CallerIdentity;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * The caller's identity on a TLS connection: its certificate's subject CN, as the client port reads
 * it ({@link CallerIdentity#commonName}); "" without one.
 */
final class Identity {
  private Identity() {}

  static String of(SSLSession session) {
    try {
      Certificate[] chain = session.getPeerCertificates();
      return chain.length > 0 && chain[0] instanceof X509Certificate cert
          ? CallerIdentity.commonName(cert)
          : "";
    } catch (SSLPeerUnverifiedException e) {
      return "";
    }
  }
}
