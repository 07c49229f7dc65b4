package dev.fencekeeper.gateway;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/** The caller's identity on a TLS connection: its certificate's subject CN ("" without one). */
final class Identity {
  private Identity() {}

  static String of(SSLSession session) {
    try {
      Certificate[] chain = session.getPeerCertificates();
      return chain.length > 0 && chain[0] instanceof X509Certificate cert ? commonName(cert) : "";
    } catch (SSLPeerUnverifiedException e) {
      return "";
    }
  }

  private static String commonName(X509Certificate cert) {
    try {
      for (Rdn rdn : new LdapName(cert.getSubjectX500Principal().getName()).getRdns()) {
        if ("CN".equalsIgnoreCase(rdn.getType())) {
          return rdn.getValue().toString();
        }
      }
      return "";
    } catch (InvalidNameException e) {
      return "";
    }
  }
}
