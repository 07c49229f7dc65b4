package dev.fencekeeper.gateway;

import dev.fencekeeper.proto.FencekeeperGrpc.AsyncService;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Function;
import javax.net.ssl.SSLException;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.thirdparty.io.grpc.Context;
import org.apache.ratis.thirdparty.io.netty.bootstrap.ServerBootstrap;
import org.apache.ratis.thirdparty.io.netty.channel.Channel;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelInitializer;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelOption;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelPipeline;
import org.apache.ratis.thirdparty.io.netty.channel.EventLoopGroup;
import org.apache.ratis.thirdparty.io.netty.channel.WriteBufferWaterMark;
import org.apache.ratis.thirdparty.io.netty.channel.nio.NioEventLoopGroup;
import org.apache.ratis.thirdparty.io.netty.channel.socket.SocketChannel;
import org.apache.ratis.thirdparty.io.netty.channel.socket.nio.NioServerSocketChannel;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpServerCodec;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.ClientAuth;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContextBuilder;
import org.apache.ratis.thirdparty.io.netty.handler.timeout.IdleStateHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * fencekeeper's client protocol as JSON over HTTP/1.1, on a port of its own beside the gRPC client
 * port: every call of {@code fencekeeper.v1.Fencekeeper} is a POST of its request message as JSON
 * to a route ({@code /v1/leases/acquire}, ...), answered with the Response as JSON whose {@code
 * status} is the result code, and an HTTP status that goes with it. Watch and Session answer with
 * newline-delimited JSON. The gateway has no logic of its own: it calls the node's gRPC service
 * implementation in-process, under the caller's identity, so TLS identities, admin authorization,
 * limits and OVERLOADED answers are the client port's. docs/http-gateway.md is the reference.
 */
public final class HttpGateway implements AutoCloseable {
  private final AtomicBoolean closed = new AtomicBoolean();

  private static final Logger LOG = LoggerFactory.getLogger(HttpGateway.class);
  private static final int MAX_HEADER_BYTES = 16 * 1024;

  private final EventLoopGroup loop;
  private final Channel server;
  private final GatewayContext context;

  private HttpGateway(EventLoopGroup loop, Channel server, GatewayContext context) {
    this.loop = loop;
    this.server = server;
    this.context = context;
  }

  /**
   * Starts a gateway in front of {@code service}.
   *
   * @param tls the node's key and trust managers, the same the client port serves, so that a
   *     certificate reload reaches the gateway too; null exactly when {@code settings} has no TLS
   * @param handshakeRefused told of every TLS handshake the gateway refuses: the remote address and
   *     why
   * @param callerContext the gRPC context a call of an identity runs in (the service reads the
   *     caller from it)
   * @param gatewayAddressOf a node id's gateway address (host:port), to redirect NOT_LEADER answers
   *     to the leader's gateway
   */
  public static HttpGateway start(
      GatewaySettings settings,
      GrpcTlsConfig tls,
      BiConsumer<SocketAddress, Throwable> handshakeRefused,
      AsyncService service,
      Function<String, Context> callerContext,
      Function<String, Optional<String>> gatewayAddressOf)
      throws IOException {
    SslContext ssl = sslContext(settings, tls);
    GatewayContext context =
        new GatewayContext(settings, service, callerContext, gatewayAddressOf, handshakeRefused);
    AtomicInteger threads = new AtomicInteger();
    EventLoopGroup loop =
        new NioEventLoopGroup(
            2,
            r -> {
              Thread t =
                  new Thread(
                      r, "fencekeeper-http-" + settings.port() + "-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    try {
      Channel server =
          new ServerBootstrap()
              .group(loop)
              .channel(NioServerSocketChannel.class)
              .option(ChannelOption.SO_REUSEADDR, true)
              .childOption(
                  ChannelOption.WRITE_BUFFER_WATER_MARK,
                  new WriteBufferWaterMark(64 * 1024, 256 * 1024))
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      ChannelPipeline p = ch.pipeline();
                      if (ssl != null) {
                        p.addLast(ssl.newHandler(ch.alloc()));
                      }
                      p.addLast(
                          new IdleStateHandler(
                              0, 0, settings.idleTimeout().toMillis(), TimeUnit.MILLISECONDS));
                      p.addLast(RequestBytes.INSTANCE);
                      p.addLast(new HttpServerCodec(4096, MAX_HEADER_BYTES, 64 * 1024));
                      p.addLast(new HttpServerExpectContinueHandler());
                      p.addLast(new GatewayHandler(context, !context.connectionOpened()));
                    }
                  })
              .bind(new InetSocketAddress(settings.bindHost(), settings.port()))
              .syncUninterruptibly()
              .channel();
      HttpGateway gateway = new HttpGateway(loop, server, context);
      LOG.info(
          "JSON gateway on {}://{}:{}",
          ssl != null ? "https" : "http",
          settings.bindHost(),
          gateway.port());
      return gateway;
    } catch (RuntimeException e) {
      loop.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      throw new IOException(
          "the JSON gateway cannot listen on "
              + settings.bindHost()
              + ":"
              + settings.port()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * The same TLS as the client port, through the same managers: this node's certificate as last
   * (re)loaded, client certificates required.
   */
  private static SslContext sslContext(GatewaySettings settings, GrpcTlsConfig tls)
      throws SSLException {
    if (settings.security().tlsEnabled() != (tls != null)) {
      throw new IllegalArgumentException(
          "the gateway's TLS managers must be given exactly when the configuration has TLS");
    }
    if (tls == null) {
      return null;
    }
    return SslContextBuilder.forServer(tls.getKeyManager().getKeyManager())
        .trustManager(tls.getTrustManager().getTrustManager())
        .clientAuth(ClientAuth.REQUIRE)
        .build();
  }

  /** The port it listens on. */
  public int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return; // a node that stopped for want of storage has closed it already
    }
    try {
      server.close().syncUninterruptibly();
    } finally {
      loop.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }
}
