package dev.fencekeeper.server;

import com.google.protobuf.CodedOutputStream;
import dev.fencekeeper.client.wire.LeaderRejection;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.metrics.StateMachineMetrics;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.EnumSet;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.apache.ratis.grpc.server.GrpcServices;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.proto.grpc.AdminProtocolServiceGrpc;
import org.apache.ratis.proto.grpc.RaftClientProtocolServiceGrpc;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Grpc;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * Establishes who is calling a node from the TLS session, on every gRPC call, before Ratis sees it.
 *
 * <p>Ratis hands client requests to the state machine on its own threads and offers no hook that sees the
 * connection, so the identity travels inside the request: for every message on the client service this
 * gate appends the {@code caller} field of {@link Request} carrying the certificate's CN (empty without
 * TLS). Protobuf keeps the last occurrence of a field, so whatever a client wrote there itself is
 * overwritten, and the leader logs the request with the identity it verified — every replica then judges
 * lease ownership on the same bytes.
 *
 * <p>Admin operations that Ratis serves itself (membership, leader moves, snapshots, elections, group
 * changes) never reach the state machine, so they are refused here unless the caller is in {@code
 * authz.admins}; the server-to-server protocol is refused unless the caller is in {@code authz.nodes}.
 * Without TLS there is no identity and nothing is refused.
 */
final class CallerGate implements ServerInterceptor {
  private static final Set<String> ADMIN_ONLY = Set.of(
      "setConfiguration", "transferLeadership", "groupManagement", "snapshotManagement", "leaderElectionManagement");

  private final Security security;
  private final StateMachineMetrics metrics;

  CallerGate(Security security, StateMachineMetrics metrics) {
    this.security = security;
    this.metrics = metrics;
  }

  /** Installs the gate on every gRPC server Ratis builds for this node. */
  GrpcServices.Customizer customizer() {
    return (NettyServerBuilder builder, EnumSet<GrpcServices.Type> types) -> builder.intercept(this);
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                    ServerCallHandler<Q, A> next) {
    String caller = callerOf(call);
    String service = call.getMethodDescriptor().getServiceName();
    String method = call.getMethodDescriptor().getBareMethodName();
    if (AdminProtocolServiceGrpc.SERVICE_NAME.equals(service) && ADMIN_ONLY.contains(method)
        && !security.isAdmin(caller)) {
      return refuse(call, method, caller, "is not in authz.admins");
    }
    if (RaftServerProtocolServiceGrpc.SERVICE_NAME.equals(service) && !security.isNode(caller)) {
      return refuse(call, method, caller, "is not in authz.nodes");
    }
    if (RaftClientProtocolServiceGrpc.SERVICE_NAME.equals(service)) {
      return new SimpleForwardingServerCallListener<Q>(next.startCall(call, headers)) {
        @Override
        public void onMessage(Q message) {
          super.onMessage(message instanceof RaftClientRequestProto request ? cast(stamp(request, caller)) : message);
        }
      };
    }
    return next.startCall(call, headers);
  }

  @SuppressWarnings("unchecked")
  private static <Q> Q cast(Object message) {
    return (Q) message;
  }

  private <Q, A> ServerCall.Listener<Q> refuse(ServerCall<Q, A> call, String method, String caller, String why) {
    String message = "identity '" + caller + "' may not call " + method + ": it " + why;
    metrics.denied(method, caller, message);
    // The whole Response rides in the status description, so clients report it as an ordinary result.
    Response response = Response.newBuilder().setCode(ResultCode.PERMISSION_DENIED).setMessage(message).build();
    call.close(Status.PERMISSION_DENIED.withDescription(LeaderRejection.encode(response)), new Metadata());
    return new ServerCall.Listener<>() {};
  }

  /**
   * {@code request} with the caller field appended to its content; the last occurrence wins on decode.
   *
   * <p>Only writes (commands, to {@code startTransaction}) and linearizable reads (to {@code query}) carry
   * a fencekeeper request whose caller matters, and only non-empty ones: the empty reads are Ratis's own.
   * Everything else passes as it came. Stale reads are answered as anonymous instead ({@code
   * FencingStateMachine.queryStale}). Stamping every request type once made a node that had lost
   * leadership stop answering stale reads; the cause was narrowed to request types other than these two,
   * not further.
   */
  static RaftClientRequestProto stamp(RaftClientRequestProto request, String caller) {
    if (!(request.hasWrite() || request.hasRead()) || request.getMessage().getContent().isEmpty()) {
      return request;
    }
    ByteString content = request.getMessage().getContent();
    ByteString stamped = content.concat(ByteString.copyFrom(callerField(caller)));
    return request.toBuilder().setMessage(request.getMessage().toBuilder().setContent(stamped)).build();
  }

  /** The encoded {@code caller} field, written even when empty so that it always overrides. */
  static byte[] callerField(String caller) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      CodedOutputStream out = CodedOutputStream.newInstance(bytes);
      out.writeString(Request.CALLER_FIELD_NUMBER, caller);
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The subject CN of the peer's certificate; empty on a plaintext connection. */
  static String callerOf(ServerCall<?, ?> call) {
    SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
    if (session == null) {
      return "";
    }
    try {
      Certificate[] chain = session.getPeerCertificates();
      return chain.length > 0 && chain[0] instanceof X509Certificate cert ? commonName(cert) : "";
    } catch (SSLPeerUnverifiedException e) {
      return "";
    }
  }

  static String commonName(X509Certificate cert) {
    try {
      for (Rdn rdn : new LdapName(cert.getSubjectX500Principal().getName()).getRdns()) {
        if ("CN".equalsIgnoreCase(rdn.getType())) {
          return rdn.getValue().toString();
        }
      }
      return "";
    } catch (InvalidNameException e) {
      return "";
    }
  }
}
