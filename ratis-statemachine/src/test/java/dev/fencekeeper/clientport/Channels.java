package dev.fencekeeper.clientport;

import dev.fencekeeper.proto.FencekeeperGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.Channel;
import org.apache.ratis.thirdparty.io.grpc.ClientCall;
import org.apache.ratis.thirdparty.io.grpc.ClientInterceptor;
import org.apache.ratis.thirdparty.io.grpc.ClientInterceptors;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
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

  private final java.util.Map<String, ManagedChannel> byAddress = new java.util.HashMap<>();

  /** The one channel of this set to {@code address}. */
  ManagedChannel to(String address) {
    synchronized (open) {
      return byAddress.computeIfAbsent(address, this::newChannel);
    }
  }

  /** A channel of its own to {@code address} (a connection nothing else shares). */
  ManagedChannel newChannel(String address) {
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

  /** A blocking stub whose every call has a deadline of its own, 20 s after it starts. */
  FencekeeperGrpc.FencekeeperBlockingStub blocking(String address) {
    Channel withDeadlines =
        ClientInterceptors.intercept(
            to(address),
            new ClientInterceptor() {
              @Override
              public <Q, A> ClientCall<Q, A> interceptCall(
                  MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
                return next.newCall(method, options.withDeadlineAfter(20, TimeUnit.SECONDS));
              }
            });
    return FencekeeperGrpc.newBlockingStub(withDeadlines);
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
      byAddress.clear();
    }
  }
}
