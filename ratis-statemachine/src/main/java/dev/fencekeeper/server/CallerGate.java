package dev.fencekeeper.server;

import dev.fencekeeper.clientport.CallerIdentity;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.metrics.StateMachineMetrics;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.Status;

/**
 * Lets only the cluster's nodes speak the peers' protocols on a node's Raft port: the
 * server-to-server protocol (appends, votes, snapshots) and the nodes' introductions ({@link
 * PeerIntroductions}) are refused unless the caller, the CN of the TLS session's certificate, is in
 * {@code authz.nodes}. Without TLS there is no identity and nothing is refused here. Everything
 * else on the Raft port (Ratis's client and admin services, the client protocol) is refused before
 * it reaches this gate ({@code RaftPortGuide}), so every identity clients use is established by the
 * client port ({@link CallerIdentity}).
 */
final class CallerGate implements ServerInterceptor {
  private final Security security;
  private final StateMachineMetrics metrics;

  CallerGate(Security security, StateMachineMetrics metrics) {
    this.security = security;
    this.metrics = metrics;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    String service = call.getMethodDescriptor().getServiceName();
    if (RaftServerProtocolServiceGrpc.SERVICE_NAME.equals(service)
        || PeerIntroductions.SERVICE.equals(service)) {
      String caller = CallerIdentity.of(call);
      if (!security.isNode(caller)) {
        return refuse(call, call.getMethodDescriptor().getBareMethodName(), caller);
      }
    }
    return next.startCall(call, headers);
  }

  private <Q, A> ServerCall.Listener<Q> refuse(
      ServerCall<Q, A> call, String method, String caller) {
    String message =
        "identity '" + caller + "' may not call " + method + ": it is not in authz.nodes";
    metrics.denied(method, caller, message);
    call.close(Status.PERMISSION_DENIED.withDescription(message), new Metadata());
    return new ServerCall.Listener<>() {};
  }
}
