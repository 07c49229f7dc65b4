package dev.fencekeeper.gateway;

import dev.fencekeeper.proto.FencekeeperGrpc.AsyncService;
import java.net.SocketAddress;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.apache.ratis.thirdparty.io.grpc.Context;

/** What every connection of one gateway shares. */
final class GatewayContext {
  private final GatewaySettings settings;
  private final AsyncService service;
  private final Function<String, Context> callerContext;
  private final Function<String, Optional<String>> gatewayAddressOf;
  private final BiConsumer<SocketAddress, Throwable> handshakeRefused;
  private final AtomicInteger connections = new AtomicInteger();

  GatewayContext(
      GatewaySettings settings,
      AsyncService service,
      Function<String, Context> callerContext,
      Function<String, Optional<String>> gatewayAddressOf,
      BiConsumer<SocketAddress, Throwable> handshakeRefused) {
    this.settings = settings;
    this.service = service;
    this.callerContext = callerContext;
    this.gatewayAddressOf = gatewayAddressOf;
    this.handshakeRefused = handshakeRefused;
  }

  GatewaySettings settings() {
    return settings;
  }

  AsyncService service() {
    return service;
  }

  /** The context a call of {@code caller} runs in: the service reads the identity from it. */
  Context contextFor(String caller) {
    return callerContext.apply(caller);
  }

  /** A connection opened; false when it is over the limit (it is answered 429 and closed). */
  boolean connectionOpened() {
    return connections.incrementAndGet() <= settings.maxConnections();
  }

  /** A TLS handshake from {@code remote} failed: the node logs and counts it. */
  void handshakeRefused(SocketAddress remote, Throwable cause) {
    handshakeRefused.accept(remote, cause);
  }

  void connectionClosed() {
    connections.decrementAndGet();
  }

  /** The URL of {@code path} on the gateway of node {@code leaderId}, when it is known. */
  Optional<String> leaderUrl(String leaderId, String path) {
    if (leaderId == null || leaderId.isEmpty()) {
      return Optional.empty();
    }
    String scheme = settings.security().tlsEnabled() ? "https://" : "http://";
    return gatewayAddressOf.apply(leaderId).map(address -> scheme + address + path);
  }
}
