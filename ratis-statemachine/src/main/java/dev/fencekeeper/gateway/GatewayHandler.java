package dev.fencekeeper.gateway;

import dev.fencekeeper.proto.ResultCode;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.ratis.thirdparty.io.netty.buffer.Unpooled;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.ratis.thirdparty.io.netty.channel.socket.DuplexChannel;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.DefaultFullHttpResponse;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.FullHttpResponse;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpContent;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpHeaderNames;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpHeaderValues;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpMethod;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpRequest;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpResponseStatus;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpUtil;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpVersion;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.LastHttpContent;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.QueryStringDecoder;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslHandler;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslHandshakeCompletionEvent;
import org.apache.ratis.thirdparty.io.netty.handler.timeout.IdleStateEvent;
import org.apache.ratis.thirdparty.io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One HTTP connection of the gateway: routes each request, refuses what is malformed, misrouted or
 * too big before the service sees it, and hands the rest to an {@link Exchange}. One request at a
 * time per connection (no pipelining); an idle connection is closed. Each request must be complete,
 * from its first byte ({@link RequestBytes}) to the end of its body, within the request timeout, or
 * it is answered 408 and the connection closed: a request line or headers trickled a byte at a time
 * are cut off as a trickled body is. A session's body is a stream and is bounded only until its
 * headers are in.
 */
final class GatewayHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(GatewayHandler.class);
  static final String JSON = "application/json";

  private final GatewayContext gateway;
  private final boolean overConnectionLimit;
  private String caller = "";
  private Exchange exchange;
  // Bytes of a request arrived and its last part has not: its deadline runs (unless a session's).
  private boolean requestOpen;
  private ScheduledFuture<?> deadline;

  GatewayHandler(GatewayContext gateway, boolean overConnectionLimit) {
    this.gateway = gateway;
    this.overConnectionLimit = overConnectionLimit;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    try {
      if (msg instanceof HttpRequest request) {
        if (!requestOpen) {
          requestStarted(ctx); // its first bytes came in the same read as the last request's end
        }
        onRequest(ctx, request);
      }
      if (msg instanceof HttpContent content && exchange != null) {
        exchange.onContent(content);
      }
      if (msg instanceof LastHttpContent) {
        requestOpen = false;
        stopDeadline();
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  private void onRequest(ChannelHandlerContext ctx, HttpRequest request) {
    if (exchange != null && !exchange.isFinished()) {
      refuse(ctx, HttpResponseStatus.BAD_REQUEST, "one request at a time per connection", false);
      return;
    }
    exchange = null;
    if (request.decoderResult().isFailure()) {
      refuse(ctx, HttpResponseStatus.BAD_REQUEST, "malformed HTTP request", false);
      return;
    }
    boolean keepAlive = HttpUtil.isKeepAlive(request);
    if (overConnectionLimit) {
      exchange = Exchange.discarding();
      respond(
          ctx,
          HttpResponseStatus.TOO_MANY_REQUESTS,
          JsonMapping.rejection(
              ResultCode.OVERLOADED,
              "this node's gateway has "
                  + gateway.settings().maxConnections()
                  + " connections open already; retry later"),
          false,
          null);
      return;
    }
    String path = new QueryStringDecoder(request.uri()).path();
    Route route = Route.ALL.get(path);
    if (route == null) {
      refuse(
          ctx, HttpResponseStatus.NOT_FOUND, "no route " + path + " (routes: /v1/...)", keepAlive);
      return;
    }
    HttpMethod method = request.method();
    if (!(HttpMethod.POST.equals(method)
        || (HttpMethod.GET.equals(method) && route.acceptsGet()))) {
      refuse(
          ctx,
          HttpResponseStatus.METHOD_NOT_ALLOWED,
          method + " " + path + ": use POST",
          keepAlive);
      return;
    }
    long length = HttpUtil.getContentLength(request, -1L);
    if (length > gateway.settings().maxBodyBytes()) {
      refuse(
          ctx,
          HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
          "request body of " + length + " bytes, over " + gateway.settings().maxBodyBytes(),
          false);
      return;
    }
    exchange = new Exchange(gateway, ctx, route, keepAlive, caller);
    if (route.kind() == Route.Kind.SESSION) {
      stopDeadline(); // its body is the stream of the client's session messages
    }
    exchange.begin();
  }

  private void requestStarted(ChannelHandlerContext ctx) {
    requestOpen = true;
    stopDeadline();
    deadline =
        ctx.executor()
            .schedule(
                () -> requestTimedOut(ctx),
                gateway.settings().requestTimeout().toMillis(),
                TimeUnit.MILLISECONDS);
  }

  private void stopDeadline() {
    if (deadline != null) {
      deadline.cancel(false);
      deadline = null;
    }
  }

  private void requestTimedOut(ChannelHandlerContext ctx) {
    deadline = null;
    if (!requestOpen || !ctx.channel().isActive()) {
      return;
    }
    requestOpen = false;
    if (exchange == null) {
      // Its request line or headers are still incomplete.
      exchange = Exchange.discarding();
      respond(
          ctx,
          HttpResponseStatus.REQUEST_TIMEOUT,
          JsonMapping.rejection(ResultCode.INVALID_ARGUMENT, notCompleteInTime(gateway.settings())),
          false,
          null);
    } else if (!exchange.isFinished()) {
      exchange.timedOut();
    } else {
      ctx.close(); // answered already (refused), and the rest of it still trickles in
    }
  }

  /** What a 408 says. */
  static String notCompleteInTime(GatewaySettings settings) {
    return "the request was not complete within " + settings.requestTimeout().toMillis() + " ms";
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    stopDeadline();
    if (exchange != null) {
      exchange.connectionClosed();
    }
    gateway.connectionClosed();
    ctx.fireChannelInactive();
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (ctx.channel().isWritable() && exchange != null) {
      exchange.writable();
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
    if (event == RequestBytes.ARRIVED) {
      if (!requestOpen && (exchange == null || exchange.isFinished())) {
        exchange = null;
        requestStarted(ctx);
      }
      return;
    }
    if (event instanceof SslHandshakeCompletionEvent done) {
      if (done.isSuccess()) {
        SslHandler ssl = ctx.pipeline().get(SslHandler.class);
        caller = Identity.of(ssl.engine().getSession());
      } else {
        gateway.handshakeRefused(ctx.channel().remoteAddress(), done.cause());
      }
    } else if (event instanceof IdleStateEvent && (exchange == null || exchange.isFinished())) {
      ctx.close(); // a kept-alive connection nobody uses
      return;
    }
    ctx.fireUserEventTriggered(event);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // Never a stack trace to the caller: a TLS or socket failure ends the connection.
    LOG.debug("gateway connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
    ctx.close();
  }

  private void refuse(
      ChannelHandlerContext ctx, HttpResponseStatus status, String why, boolean keepAlive) {
    // The rest of a refused request's body, if any, is read and dropped.
    exchange = Exchange.discarding();
    respond(ctx, status, JsonMapping.rejection(ResultCode.INVALID_ARGUMENT, why), keepAlive, null);
  }

  /** A complete answer: one JSON object, with the headers that go with its status. */
  static void respond(
      ChannelHandlerContext ctx,
      HttpResponseStatus status,
      String json,
      boolean keepAlive,
      String location) {
    ByteBuf body = Unpooled.copiedBuffer(json + "\n", StandardCharsets.UTF_8);
    FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
    response.headers().set(HttpHeaderNames.CONTENT_TYPE, JSON);
    response.headers().set(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
    response.headers().set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
    if (location != null) {
      response.headers().set(HttpHeaderNames.LOCATION, location);
    }
    if (status.equals(HttpResponseStatus.TOO_MANY_REQUESTS)
        || status.equals(HttpResponseStatus.SERVICE_UNAVAILABLE)) {
      response.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
    }
    if (keepAlive) {
      HttpUtil.setKeepAlive(response, true);
      ctx.writeAndFlush(response);
    } else {
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(response).addListener(written -> closeAfterTheClient(ctx));
    }
  }

  /**
   * Ends a connection whose answer has been sent, letting the client finish first. Closed at once
   * while the client is still sending a body it was refused, the connection would be reset and the
   * reset could destroy the answer before the client reads it; so this side stops writing, goes on
   * reading (and dropping) what still arrives, and closes when the client does or after a bound.
   */
  private static void closeAfterTheClient(ChannelHandlerContext ctx) {
    if (ctx.channel() instanceof DuplexChannel duplex && duplex.isActive()) {
      duplex.shutdownOutput();
      ctx.executor().schedule(() -> ctx.close(), LINGER_MS, TimeUnit.MILLISECONDS);
    } else {
      ctx.close();
    }
  }

  private static final long LINGER_MS = 2_000;
}
