package dev.fencekeeper.clientport;

import dev.fencekeeper.proto.FencekeeperGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;

/** Plaintext or TLS channels to client ports, closed together. */
final class Channels implements AutoCloseable {
  private final List<ManagedChannel> open = new ArrayList<>();
  private final SslContext tls;

  Channels() {
    this(null);
  }

  Channels(SslContext tls) {
    this.tls = tls;
  }

  ManagedChannel to(String address) {
    int colon = address.lastIndexOf(':');
    NettyChannelBuilder b =
        NettyChannelBuilder.forAddress(
                address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)))
            .maxInboundMessageSize(64 << 20);
    if (tls == null) {
      b.usePlaintext();
    } else {
      b.sslContext(tls);
    }
    ManagedChannel channel = b.build();
    synchronized (open) {
      open.add(channel);
    }
    return channel;
  }

  FencekeeperGrpc.FencekeeperBlockingStub blocking(String address) {
    return FencekeeperGrpc.newBlockingStub(to(address)).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  FencekeeperGrpc.FencekeeperStub async(String address) {
    return FencekeeperGrpc.newStub(to(address));
  }

  @Override
  public void close() {
    synchronized (open) {
      for (ManagedChannel c : open) {
        c.shutdownNow();
      }
      for (ManagedChannel c : open) {
        try {
          c.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      open.clear();
    }
  }
}
