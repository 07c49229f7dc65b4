package dev.fencekeeper.server;

import dev.fencekeeper.clientport.CallerIdentity;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.metrics.StateMachineMetrics;
import dev.fencekeeper.proto.Request;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.cert.X509Certificate;
import java.util.Set;
import org.apache.ratis.client.impl.OrderedAsync;
import org.apache.ratis.proto.RaftProtos.RaftClientReplyProto;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.proto.RaftProtos.StaleReadRequestTypeProto;
import org.apache.ratis.proto.grpc.AdminProtocolServiceGrpc;
import org.apache.ratis.proto.grpc.RaftClientProtocolServiceGrpc;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.CodedOutputStream;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.Status;

/**
 * Establishes who is calling a node from the TLS session, on every gRPC call, before Ratis sees it.
 *
 * <p>Ratis hands client requests to the state machine on its own threads and offers no hook that
 * sees the connection, so the identity travels inside the request: for every message on the client
 * service this gate appends the {@code caller} field of {@link Request} carrying the certificate's
 * CN (empty without TLS). Protobuf keeps the last occurrence of a field, so whatever a client wrote
 * there itself is overwritten, and the leader logs the request with the identity it verified —
 * every replica then judges lease ownership on the same bytes.
 *
 * <p>It also bounds the reads the node holds at once ({@link ReadsInFlight}, {@code
 * overload.pending-reads.max}): a read that finds no free slot is marked {@code read_overloaded}
 * and turned into a stale read, which Ratis hands to the state machine at once, without the
 * read-index round, and the state machine answers it OVERLOADED. The gate cannot answer it itself:
 * on a client's ordered stream Ratis answers requests strictly in sequence, so a request that never
 * reached Ratis would hold up every later one of that stream.
 *
 * <p>Admin operations that Ratis serves itself (membership, leader moves, snapshots, elections,
 * group changes) never reach the state machine, so they are refused here unless the caller is in
 * {@code authz.admins}; the server-to-server protocol and the nodes' introductions ({@link
 * PeerIntroductions}) are refused unless the caller is in {@code authz.nodes}. Without TLS there is
 * no identity and nothing is refused.
 */
final class CallerGate implements ServerInterceptor {
  private static final Set<String> ADMIN_ONLY =
      Set.of(
          "setConfiguration",
          "transferLeadership",
          "groupManagement",
          "snapshotManagement",
          "leaderElectionManagement");

  private final Security security;
  private final StateMachineMetrics metrics;
  private final ReadsInFlight reads;

  CallerGate(Security security, StateMachineMetrics metrics, ReadsInFlight reads) {
    this.security = security;
    this.metrics = metrics;
    this.reads = reads;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    String caller = callerOf(call);
    String service = call.getMethodDescriptor().getServiceName();
    String method = call.getMethodDescriptor().getBareMethodName();
    if (AdminProtocolServiceGrpc.SERVICE_NAME.equals(service)
        && ADMIN_ONLY.contains(method)
        && !security.isAdmin(caller)) {
      return refuse(call, method, caller, "is not in authz.admins");
    }
    if ((RaftServerProtocolServiceGrpc.SERVICE_NAME.equals(service)
            || PeerIntroductions.SERVICE.equals(service))
        && !security.isNode(caller)) {
      return refuse(call, method, caller, "is not in authz.nodes");
    }
    if (RaftClientProtocolServiceGrpc.SERVICE_NAME.equals(service)) {
      ReadsInFlight.Stream stream = reads.openStream();
      ServerCall<Q, A> answering =
          new SimpleForwardingServerCall<>(call) {
            @Override
            public void sendMessage(A message) {
              try {
                super.sendMessage(message);
              } finally {
                if (message instanceof RaftClientReplyProto reply) {
                  stream.answered(reply.getRpcReply().getCallId());
                }
              }
            }

            @Override
            public void close(Status status, Metadata trailers) {
              stream.close();
              super.close(status, trailers);
            }
          };
      return new SimpleForwardingServerCallListener<Q>(next.startCall(answering, headers)) {
        @Override
        public void onMessage(Q message) {
          super.onMessage(
              message instanceof RaftClientRequestProto request
                  ? cast(admit(request, caller, stream))
                  : message);
        }

        @Override
        public void onCancel() {
          stream.close();
          super.onCancel();
        }
      };
    }
    return next.startCall(call, headers);
  }

  /**
   * {@code request} as Ratis should see it: stamped with its caller, and for a read, with the
   * bound's verdict.
   */
  private RaftClientRequestProto admit(
      RaftClientRequestProto request, String caller, ReadsInFlight.Stream stream) {
    if (!isRead(request)) {
      return stamp(request, caller);
    }
    if (stream.admit(request.getRpcRequest().getCallId())) {
      return isRatisDummy(request) ? request : stampRead(request, caller, false);
    }
    metrics.readOverloaded(caller);
    return stampRead(request, caller, true).toBuilder()
        .setStaleRead(StaleReadRequestTypeProto.getDefaultInstance())
        .build();
  }

  /**
   * A read, linearizable or stale (fencekeeper's watches included). Ratis's own probe is a
   * watch-type request, not one of these; a read with its content still waits for a read index, so
   * it counts.
   */
  static boolean isRead(RaftClientRequestProto request) {
    return request.hasRead() || request.hasStaleRead();
  }

  @SuppressWarnings("unchecked")
  private static <Q> Q cast(Object message) {
    return (Q) message;
  }

  private <Q, A> ServerCall.Listener<Q> refuse(
      ServerCall<Q, A> call, String method, String caller, String why) {
    String message = "identity '" + caller + "' may not call " + method + ": it " + why;
    metrics.denied(method, caller, message);
    // gRPC's own status code says what it is; Ratis's admin client reports it with this message.
    call.close(Status.PERMISSION_DENIED.withDescription(message), new Metadata());
    return new ServerCall.Listener<>() {};
  }

  /**
   * {@code request} with the caller field appended to its content; the last occurrence wins on
   * decode.
   *
   * <p>Writes (commands, to {@code startTransaction}), linearizable reads (to {@code query}) and
   * stale reads (to {@code queryStale}) carry a fencekeeper request; everything else passes as it
   * came. So does Ratis's own probe, a watch whose content is {@link OrderedAsync#DUMMY}: each new
   * ordered stream of a Ratis client starts with it, and Ratis answers it at once only while its
   * content is exactly that (in {@code RaftServerImpl.watchAsync}). Stamped, it became a real
   * watch, which only a leader answers; a node that was not leader then failed it, and the stale
   * read queued behind it on the same stream never came. That is why stale reads were once left
   * unstamped.
   */
  static RaftClientRequestProto stamp(RaftClientRequestProto request, String caller) {
    if (!(request.hasWrite() || request.hasRead() || request.hasStaleRead())
        || isRatisDummy(request)) {
      return request;
    }
    return appended(request, callerField(caller));
  }

  /**
   * As {@link #stamp}, and the bound's verdict on the read, which likewise overrides what the
   * client wrote.
   */
  static RaftClientRequestProto stampRead(
      RaftClientRequestProto request, String caller, boolean overloaded) {
    return appended(request, callerField(caller), overloadedField(overloaded));
  }

  private static boolean isRatisDummy(RaftClientRequestProto request) {
    return request.getMessage().getContent().equals(OrderedAsync.DUMMY.getContent());
  }

  private static RaftClientRequestProto appended(RaftClientRequestProto request, byte[]... fields) {
    ByteString content = request.getMessage().getContent();
    for (byte[] field : fields) {
      content = content.concat(ByteString.copyFrom(field));
    }
    return request.toBuilder()
        .setMessage(request.getMessage().toBuilder().setContent(content))
        .build();
  }

  /** The encoded {@code caller} field, written even when empty so that it always overrides. */
  static byte[] callerField(String caller) {
    return encoded(out -> out.writeString(Request.CALLER_FIELD_NUMBER, caller));
  }

  /**
   * The encoded {@code read_overloaded} field, written even when false so that it always overrides.
   */
  static byte[] overloadedField(boolean overloaded) {
    return encoded(out -> out.writeBool(Request.READ_OVERLOADED_FIELD_NUMBER, overloaded));
  }

  private interface FieldWriter {
    void write(CodedOutputStream out) throws IOException;
  }

  private static byte[] encoded(FieldWriter field) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      CodedOutputStream out = CodedOutputStream.newInstance(bytes);
      field.write(out);
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The subject CN of the peer's certificate; empty on a plaintext connection. */
  static String callerOf(ServerCall<?, ?> call) {
    return CallerIdentity.of(call);
  }

  static String commonName(X509Certificate cert) {
    return CallerIdentity.commonName(cert);
  }
}
