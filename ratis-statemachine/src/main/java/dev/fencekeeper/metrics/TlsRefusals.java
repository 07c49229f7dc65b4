package dev.fencekeeper.metrics;

import com.codahale.metrics.Counter;
import java.net.SocketAddress;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS handshakes a node's listeners refused: each counted by listener and reason ({@code
 * fencekeeper_tls_handshakes_refused_total}), and logged at WARN naming the remote address and the
 * cause (a handshake the remote end gave up, reason {@code abandoned}, at INFO), at most one line
 * per listener every {@link #LOG_EVERY_NANOS} (the next line says how many were left out, each of
 * them logged at DEBUG), so a misconfigured client retrying in a loop cannot flood the log.
 */
final class TlsRefusals {
  private static final Logger LOG = LoggerFactory.getLogger(TlsRefusals.class);

  /** One WARN line per listener at most this often. */
  static final long LOG_EVERY_NANOS = 10_000_000_000L;

  /** Why a handshake was refused: the values of the {@code reason} label. */
  enum Reason {
    /** The client's certificate has expired (or is not valid yet). */
    EXPIRED("expired", "its certificate has expired or is not valid yet"),
    /** The client's certificate is not signed by a CA in tls.trust. */
    UNTRUSTED("untrusted", "its certificate is not signed by a CA this node trusts (tls.trust)"),
    /** The client sent no certificate; this node requires one. */
    NO_CERTIFICATE("no_certificate", "it sent no client certificate, which this node requires"),
    /** The client did not speak TLS at all (plaintext on a TLS port). */
    NOT_TLS("not_tls", "it does not speak TLS (a plaintext client on a TLS port?)"),
    /**
     * The remote end ended the handshake itself: it closed the connection, or sent an alert because
     * it does not accept this node's certificate (a CA it does not trust, a name the certificate
     * does not carry). Not this node's refusal: a peer whose connection attempt was cut short at a
     * start or a stop ends its handshakes so, which is why it is not logged at WARN.
     */
    ABANDONED(
        "abandoned",
        "the remote end gave up the handshake (it closed the connection, or does not accept this"
            + " node's certificate: a CA it does not trust, a name the certificate does not"
            + " carry)"),
    /** Anything else: protocol versions, ciphers. */
    OTHER("other", "the handshake failed");

    private final String label;
    private final String meaning;

    Reason(String label, String meaning) {
      this.label = label;
      this.meaning = meaning;
    }

    String label() {
      return label;
    }
  }

  private final Map<TlsListener, Map<Reason, Counter>> counters = new EnumMap<>(TlsListener.class);
  private final Map<TlsListener, long[]> logState = new EnumMap<>(TlsListener.class);
  private final LongSupplier nanoTime;

  TlsRefusals(NodeSeries series, LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
    for (TlsListener listener : TlsListener.values()) {
      // {when the last line was written (0: never), refusals left out since}
      logState.put(listener, new long[] {0, 0});
      Map<Reason, Counter> byReason = new EnumMap<>(Reason.class);
      for (Reason reason : Reason.values()) {
        byReason.put(
            reason,
            series.counter(NodeMetric.TLS_HANDSHAKES_REFUSED, listener.label(), reason.label()));
      }
      counters.put(listener, byReason);
    }
  }

  /**
   * {@code listener} refused a handshake from {@code remote} (null if unknown) for {@code cause}.
   */
  void refused(TlsListener listener, SocketAddress remote, Throwable cause) {
    Reason reason = reasonOf(cause);
    counters.get(listener).get(reason).inc();
    long leftOut;
    long[] state = logState.get(listener);
    synchronized (state) {
      long now = nanoTime.getAsLong();
      if (state[0] != 0 && now - state[0] < LOG_EVERY_NANOS) {
        state[1]++;
        LOG.debug(
            "TLS: the {} port refused a connection from {}: {}",
            listener.label(),
            remote,
            reason.label(),
            cause);
        return;
      }
      state[0] = now == 0 ? 1 : now;
      leftOut = state[1];
      state[1] = 0;
    }
    String from = remote == null ? "an unknown address" : remote.toString();
    String more =
        leftOut == 0
            ? ""
            : "; " + leftOut + " more failed on this port since the last such line, not logged";
    if (reason == Reason.ABANDONED) {
      LOG.info(
          "TLS: a handshake on the {} port from {} ended: {} ({}){}",
          listener.label(),
          from,
          reason.meaning,
          detail(cause),
          more);
    } else {
      LOG.warn(
          "TLS: the {} port refused a connection from {}: {} ({}){}",
          listener.label(),
          from,
          reason.meaning,
          detail(cause),
          more);
    }
  }

  /** Why the handshake failed, from the exception the TLS engine raised. */
  static Reason reasonOf(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof CertificateExpiredException
          || t instanceof CertificateNotYetValidException
          || (t instanceof CertPathValidatorException invalid
              && (invalid.getReason() == CertPathValidatorException.BasicReason.EXPIRED
                  || invalid.getReason()
                      == CertPathValidatorException.BasicReason.NOT_YET_VALID))) {
        return Reason.EXPIRED;
      }
    }
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof CertPathBuilderException || t instanceof CertPathValidatorException) {
        return Reason.UNTRUSTED;
      }
      // The JDK's engine and BoringSSL's (which Netty prefers when it is there) word it apart.
      String message = String.valueOf(t.getMessage());
      if (t instanceof SSLException
          && (message.contains("Empty client certificate")
              || message.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE"))) {
        return Reason.NO_CERTIFICATE;
      }
      if (t.getClass().getSimpleName().equals("NotSslRecordException")) {
        return Reason.NOT_TLS;
      }
    }
    for (Throwable t = cause; t != null; t = t.getCause()) {
      // This node's own refusals are recognised above by their certificate exceptions; an alert
      // named here was received from the remote end (BoringSSL: SSLV3_ALERT_…/TLSV1_ALERT_…, the
      // JDK's engine: "Received fatal alert"), and a closed channel means it hung up.
      String message = String.valueOf(t.getMessage());
      if (t instanceof java.nio.channels.ClosedChannelException
          || message.contains("Received fatal alert")
          || message.contains("SSLV3_ALERT_")
          || message.contains("TLSV1_ALERT_")) {
        return Reason.ABANDONED;
      }
    }
    return Reason.OTHER;
  }

  /** The innermost message: the engine's own words, without the wrappers' class names. */
  private static String detail(Throwable cause) {
    Throwable innermost = cause;
    while (innermost.getCause() != null && innermost.getCause() != innermost) {
      innermost = innermost.getCause();
    }
    String message = innermost.getMessage();
    if (message == null) {
      return innermost.getClass().getSimpleName();
    }
    return message.length() <= 200 ? message : message.substring(0, 200) + "…";
  }
}
