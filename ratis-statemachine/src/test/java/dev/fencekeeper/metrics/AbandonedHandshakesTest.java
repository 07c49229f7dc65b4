package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.codahale.metrics.MetricRegistry;
import dev.fencekeeper.metrics.TlsRefusals.Reason;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.security.cert.CertificateExpiredException;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Which side ended a failed handshake decides what the node says about it: its own refusals are
 * WARN lines and refusal reasons, a handshake the remote end gave up is neither.
 */
class AbandonedHandshakesTest {
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();
  private final Logger logger = (Logger) LoggerFactory.getLogger(TlsRefusals.class);
  private final MetricRegistry registry = new MetricRegistry();
  private final AtomicLong now = new AtomicLong(1);
  private final TlsRefusals refusals = new TlsRefusals(new NodeSeries(registry), now::get);

  @AfterEach
  void detach() {
    logger.detachAppender(log);
  }

  // Guarantee: a handshake the remote end ended itself (it hung up mid-handshake, as peers cut
  // short at a start or stop do, or sent an alert because it does not accept this node's
  // certificate, as a client dialling a name the certificate does not carry does) is counted as
  // "abandoned" and logged at INFO, not as this node refusing the connection at WARN.
  @Test
  void aHandshakeTheRemoteEndGaveUpIsNotThisNodesRefusal() {
    log.start();
    logger.addAppender(log);
    var remote = new InetSocketAddress("10.0.0.9", 51234);

    refusals.refused(
        TlsListener.RAFT,
        remote,
        new javax.net.ssl.SSLException("x", new ClosedChannelException()));
    now.addAndGet(TlsRefusals.LOG_EVERY_NANOS);
    refusals.refused(
        TlsListener.CLIENT,
        remote,
        new SSLHandshakeException(
            "error:10000412:SSL routines:OPENSSL_internal:SSLV3_ALERT_BAD_CERTIFICATE"));
    refusals.refused(
        TlsListener.HTTP,
        remote,
        new SSLHandshakeException("Received fatal alert: certificate_unknown"));

    for (String listener : List.of("raft", "client", "http")) {
      assertThat(count(listener, "abandoned")).as(listener).isOne();
      assertThat(count(listener, "other")).as(listener).isZero();
    }
    assertThat(log.list).hasSize(3).allMatch(e -> e.getLevel() == Level.INFO);
    assertThat(log.list.get(0).getFormattedMessage())
        .startsWith("TLS: a handshake on the raft port from /10.0.0.9:51234 ended: the remote end")
        .doesNotContain("refused a connection");
  }

  // Guarantee: this node's own refusal stays a refusal, even when the engine's message names the
  // alert the node sent.
  @Test
  void thisNodesOwnRefusalIsStillNamedByItsCause() {
    var expired =
        new SSLHandshakeException(
            "error:10000415:SSL routines:OPENSSL_internal:SSLV3_ALERT_CERTIFICATE_EXPIRED");
    expired.initCause(new CertificateExpiredException("NotAfter: Sat Feb 01 00:00:00 UTC 2025"));
    assertThat(TlsRefusals.reasonOf(expired)).isEqualTo(Reason.EXPIRED);
    assertThat(TlsRefusals.reasonOf(new SSLHandshakeException("no cipher suites in common")))
        .isEqualTo(Reason.OTHER);
  }

  private long count(String listener, String reason) {
    return registry
        .getCounters()
        .get(NodeMetric.TLS_HANDSHAKES_REFUSED.dropwizardName(List.of(listener, reason)))
        .getCount();
  }
}
