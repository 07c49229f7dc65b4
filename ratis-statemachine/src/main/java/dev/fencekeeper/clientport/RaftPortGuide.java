package dev.fencekeeper.clientport;

import dev.fencekeeper.proto.FencekeeperGrpc;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Set;
import org.apache.ratis.proto.grpc.AdminProtocolServiceGrpc;
import org.apache.ratis.proto.grpc.RaftClientProtocolServiceGrpc;
import org.apache.ratis.thirdparty.io.grpc.HandlerRegistry;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.ServerMethodDefinition;
import org.apache.ratis.thirdparty.io.grpc.Status;

/**
 * Keeps a node's Raft port for its peers: a call of Ratis's client or admin service (a Ratis {@code
 * RaftClient}, {@code ratis-shell}) and a client-protocol call that reached the Raft port instead
 * of the client port both fail with FAILED_PRECONDITION, saying so and naming the client port,
 * which the trailer {@value #CLIENT_ADDRESS_KEY} also carries for clients that redirect themselves.
 * Commands, reads and admin calls enter a node only through its client port, which hands them to
 * its Raft server in-process; the peers' own protocol (appends, votes, snapshots) passes untouched.
 * Installed as the Raft port's interceptor and fallback registry.
 */
public final class RaftPortGuide extends HandlerRegistry implements ServerInterceptor {
  /** Ratis's services on the Raft port that serve clients, not peers: every call is refused. */
  private static final Set<String> CLIENT_SERVICES =
      Set.of(RaftClientProtocolServiceGrpc.SERVICE_NAME, AdminProtocolServiceGrpc.SERVICE_NAME);

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
    return ServerMethodDefinition.create(method, this::<byte[], byte[]>refuse);
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    if (!CLIENT_SERVICES.contains(call.getMethodDescriptor().getServiceName())) {
      return next.startCall(call, headers);
    }
    return refuse(call, headers);
  }

  private <Q, A> ServerCall.Listener<Q> refuse(ServerCall<Q, A> call, Metadata headers) {
    Metadata trailers = new Metadata();
    trailers.put(CLIENT_ADDRESS, clientAddress);
    call.close(
        Status.FAILED_PRECONDITION.withDescription(
            "this is node "
                + nodeId
                + "'s Raft port, which serves only its peers; commands, reads and admin calls (the"
                + " client protocol, "
                + FencekeeperGrpc.SERVICE_NAME
                + ") go to its client port "
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
