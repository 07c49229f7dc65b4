package dev.fencekeeper.client;

import javax.net.ssl.SSLException;

/** What a failed TLS handshake says about its cause, in the words an operator acts on. */
final class TlsFailures {
  private TlsFailures() {}

  /**
   * The answer to a call whose TLS handshake failed before any attempt of it could reach a node:
   * PERMISSION_DENIED (the two sides did not accept each other's identity), nothing applied.
   */
  static dev.fencekeeper.proto.Response refusal(String why) {
    return dev.fencekeeper.proto.Response.newBuilder()
        .setCode(dev.fencekeeper.proto.ResultCode.PERMISSION_DENIED)
        .setMessage(why + "; nothing was sent, so nothing was applied")
        .build();
  }

  /** Why the handshake failed when {@code error} is a TLS failure, else null. */
  static String describe(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SSLException) {
        // The engine's own message can be generic ("General OpenSslEngine problem"); the cause
        // beneath it (a certificate path that does not validate, a name that does not match) is
        // what an operator acts on.
        StringBuilder all = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
          String m = c.getMessage();
          if (m != null && all.indexOf(m) < 0) {
            all.append(all.length() == 0 ? "" : ": ").append(m);
          }
        }
        return reason(all.length() == 0 ? String.valueOf(t) : all.toString());
      }
    }
    return null;
  }

  static String reason(String message) {
    String m = message.toLowerCase(java.util.Locale.ROOT);
    if (m.contains("certificate_required")) {
      return "the node requires a client certificate and this client sent none (" + message + ")";
    }
    if (m.contains("pkix") || m.contains("unable to find valid certification path")) {
      return "the node's certificate is not signed by a CA this client trusts (unknown CA: "
          + message
          + ")";
    }
    if (m.contains("no subject alternative") || m.contains("no name matching")) {
      return "the node's certificate does not name the host this client dialled (name mismatch: "
          + message
          + ")";
    }
    if (m.contains("certificate_expired")) {
      return "the node refused this client's certificate: it has expired (" + message + ")";
    }
    if (m.contains("bad_certificate")
        || m.contains("unknown_ca")
        || m.contains("certificate_unknown")) {
      return "the node refused this client's certificate: not issued by a CA it trusts, or"
          + " expired ("
          + message
          + ")";
    }
    if (m.contains("alert_internal_error")) {
      // OpenSSL-backed nodes answer a client certificate their trust manager rejects without a
      // specific reason (one another CA issued) with this alert rather than unknown_ca.
      return "the node refused this client's certificate or could not verify it (a certificate"
          + " another CA issued ends the handshake this way: "
          + message
          + ")";
    }
    return message;
  }
}
