package dev.fencekeeper.gateway;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.Security;
import java.time.Duration;

/**
 * How one node's gateway listens and what it bounds.
 *
 * @param bindHost address to listen on
 * @param port port to listen on (0: any free port, for tests)
 * @param security TLS files and identities: with TLS the gateway serves HTTPS and requires a client
 *     certificate signed by the trusted CA, as the client port does
 * @param maxBodyBytes largest request body (or session message) accepted; larger is 413
 * @param requestTimeout a request must arrive whole within this; slower is 408 (the Session route's
 *     request body is a stream and is not bounded in time)
 * @param maxConnections connections the gateway keeps open at once; more are answered 429
 * @param idleTimeout a kept-alive connection with no request in progress is closed after this
 * @param maxUnreadBytes answers a stream's reader may leave unread before it is cut off
 */
public record GatewaySettings(
    String bindHost,
    int port,
    Security security,
    int maxBodyBytes,
    Duration requestTimeout,
    int maxConnections,
    Duration idleTimeout,
    long maxUnreadBytes) {

  /** A request must arrive whole within this. */
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

  /** Connections one node's gateway keeps open at once. */
  static final int MAX_CONNECTIONS = 4096;

  /** A kept-alive connection with no request in progress is closed after this. */
  static final Duration IDLE_TIMEOUT = Duration.ofSeconds(60);

  /** Answers a stream's reader may leave unread. */
  static final long MAX_UNREAD_BYTES = 1 << 20;

  /**
   * The gateway of the node {@code config} describes: its {@code http.port} and {@code http.bind},
   * its TLS; bodies up to twice the value limit plus 64 KiB (base64 makes values a third longer).
   * Streams per identity are the service's to bound, watches and sessions each on its own, counted
   * together with the same identity's streams on the client port.
   */
  public static GatewaySettings forNode(ClusterConfig config) {
    Limits limits = config.limits();
    return new GatewaySettings(
        config.httpBindHost(),
        config.httpPort(),
        config.security(),
        2 * limits.maxValueBytes() + 64 * 1024,
        REQUEST_TIMEOUT,
        MAX_CONNECTIONS,
        IDLE_TIMEOUT,
        MAX_UNREAD_BYTES);
  }
}
