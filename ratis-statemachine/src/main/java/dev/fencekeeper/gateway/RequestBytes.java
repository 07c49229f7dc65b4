package dev.fencekeeper.gateway;

import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandler;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Sits in front of the HTTP decoder and tells the {@link GatewayHandler} behind it, with {@link
 * #ARRIVED}, that bytes of a request arrived, before the decoder sees them: the decoder says
 * nothing until a request's line and headers are complete, and a request must be complete within
 * its bound from its first byte, not from its last header.
 */
@ChannelHandler.Sharable
final class RequestBytes extends ChannelInboundHandlerAdapter {
  static final RequestBytes INSTANCE = new RequestBytes();

  /** The user event fired ahead of every read. */
  static final Object ARRIVED = new Object();

  private RequestBytes() {}

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ctx.fireUserEventTriggered(ARRIVED);
    ctx.fireChannelRead(msg);
  }
}
