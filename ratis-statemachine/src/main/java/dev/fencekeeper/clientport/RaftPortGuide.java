package dev.fencekeeper.clientport;

import dev.fencekeeper.proto.FencekeeperGrpc;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import org.apache.ratis.thirdparty.io.grpc.HandlerRegistry;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerMethodDefinition;
import org.apache.ratis.thirdparty.io.grpc.Status;

/**
 * Answers a client-protocol call that reached a node's Raft port instead of its client port: the
 * call fails with FAILED_PRECONDITION, saying so and naming the client port, which the trailer
 * {@value #CLIENT_ADDRESS_KEY} also carries for clients that redirect themselves. Installed as the
 * Raft port's fallback registry, so Ratis's own services are untouched.
 */
public final class RaftPortGuide extends HandlerRegistry {
  /** The trailer naming the node's client address (host:port). */
  public static final String CLIENT_ADDRESS_KEY = "fencekeeper-client-address";

  private static final Metadata.Key<String> CLIENT_ADDRESS =
      Metadata.Key.of(CLIENT_ADDRESS_KEY, Metadata.ASCII_STRING_MARSHALLER);
  private static final String PREFIX = FencekeeperGrpc.SERVICE_NAME + "/";

  private final String nodeId;
  private final String clientAddress;

  public RaftPortGuide(String nodeId, String clientAddress) {
    this.nodeId = nodeId;
    this.clientAddress = clientAddress;
  }

  @Override
  public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
    if (!methodName.startsWith(PREFIX)) {
      return null;
    }
    MethodDescriptor<byte[], byte[]> method =
        MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNKNOWN)
            .setFullMethodName(methodName)
            .setRequestMarshaller(Bytes.INSTANCE)
            .setResponseMarshaller(Bytes.INSTANCE)
            .build();
    return ServerMethodDefinition.create(method, this::refuse);
  }

  private ServerCall.Listener<byte[]> refuse(ServerCall<byte[], byte[]> call, Metadata headers) {
    Metadata trailers = new Metadata();
    trailers.put(CLIENT_ADDRESS, clientAddress);
    call.close(
        Status.FAILED_PRECONDITION.withDescription(
            "this is node "
                + nodeId
                + "'s Raft port, which serves only Ratis; the client protocol ("
                + FencekeeperGrpc.SERVICE_NAME
                + ") is on its client port "
                + clientAddress),
        trailers);
    return new ServerCall.Listener<>() {};
  }

  /** Messages as raw bytes: the guide never reads them. */
  static final class Bytes implements MethodDescriptor.Marshaller<byte[]> {
    static final Bytes INSTANCE = new Bytes();

    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
