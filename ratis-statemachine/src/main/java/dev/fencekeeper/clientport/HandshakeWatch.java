package dev.fencekeeper.clientport;

import java.net.SocketAddress;
import java.util.function.BiConsumer;
import javax.net.ssl.SSLException;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcHttp2ConnectionHandler;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcSslContexts;
import org.apache.ratis.thirdparty.io.grpc.netty.InternalProtocolNegotiator;
import org.apache.ratis.thirdparty.io.grpc.netty.InternalProtocolNegotiators;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandler;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.ClientAuth;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContextBuilder;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslHandler;
import org.apache.ratis.thirdparty.io.netty.util.AsciiString;

/**
 * gRPC's server TLS negotiation, with each connection's handshake watched: one that fails is
 * reported with the connection's remote address, where gRPC alone would only drop the connection
 * (and log it at FINE). gRPC adds the connection's {@link SslHandler} when the connection becomes
 * active; a watch in front of its handlers finds it at the first bytes the client sends, listens to
 * its handshake, and leaves the pipeline.
 *
 * <p>Used on the client port and, through Ratis's services customizer, on the Raft port
 * (docs/ratis-workarounds.md, "Refused handshakes on the Raft port").
 */
public final class HandshakeWatch implements InternalProtocolNegotiator.ProtocolNegotiator {
  private final InternalProtocolNegotiator.ProtocolNegotiator tls;
  private final BiConsumer<SocketAddress, Throwable> refused;

  private HandshakeWatch(SslContext sslContext, BiConsumer<SocketAddress, Throwable> refused) {
    this.tls = InternalProtocolNegotiators.serverTls(sslContext);
    this.refused = refused;
  }

  /**
   * Mutual TLS from {@code tls}'s managers, every client required to present a certificate its
   * trust manager accepts, with each refused handshake passed to {@code refused}.
   */
  public static HandshakeWatch mutualTls(
      GrpcTlsConfig tls, BiConsumer<SocketAddress, Throwable> refused) throws SSLException {
    return new HandshakeWatch(
        GrpcSslContexts.configure(SslContextBuilder.forServer(tls.getKeyManager().getKeyManager()))
            .trustManager(tls.getTrustManager().getTrustManager())
            .clientAuth(ClientAuth.REQUIRE)
            .build(),
        refused);
  }

  @Override
  public AsciiString scheme() {
    return tls.scheme();
  }

  @Override
  public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
    return new Watch(tls.newHandler(grpcHandler));
  }

  @Override
  public void close() {
    tls.close();
  }

  private final class Watch extends ChannelInboundHandlerAdapter {
    private final ChannelHandler negotiation;

    Watch(ChannelHandler negotiation) {
      this.negotiation = negotiation;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      ctx.pipeline().addAfter(ctx.name(), null, negotiation);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      SslHandler ssl = ctx.pipeline().get(SslHandler.class);
      if (ssl != null) {
        ssl.handshakeFuture()
            .addListener(
                done -> {
                  if (!done.isSuccess()) {
                    refused.accept(ctx.channel().remoteAddress(), done.cause());
                  }
                });
      }
      ctx.pipeline().remove(this);
      ctx.fireChannelRead(msg);
    }
  }
}
