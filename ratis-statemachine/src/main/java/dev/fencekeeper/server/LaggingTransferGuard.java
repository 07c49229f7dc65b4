package dev.fencekeeper.server;

import dev.fencekeeper.clientport.AdminRules;
import dev.fencekeeper.metrics.FollowerLag;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.TransferLeadershipRequestProto;
import org.apache.ratis.proto.grpc.AdminProtocolServiceGrpc;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.Status;

/**
 * Refuses, on the leader, a leadership transfer to a follower that lags ({@link FollowerLag}),
 * before Ratis sees it. Ratis would accept it and then wait, up to the caller's timeout, for the
 * follower to catch up, refusing every write meanwhile because the leader is stepping down; a
 * follower that stopped advancing may never catch up, so the clients would stall for the whole wait
 * and the transfer fail anyway.
 *
 * <p>The refusal is gRPC's FAILED_PRECONDITION with the reason as its description, as {@link
 * CallerGate} refuses with PERMISSION_DENIED, so the admin client reports it as an answer
 * (UNAVAILABLE, with the reason) and does not retry. On a node that does not lead the view is empty
 * and the request passes; Ratis redirects it to the leader.
 */
final class LaggingTransferGuard implements ServerInterceptor {
  private final Supplier<List<FollowerLag>> followers;
  private final Duration maxLag;

  LaggingTransferGuard(Supplier<List<FollowerLag>> followers, Duration maxLag) {
    this.followers = followers;
    this.maxLag = maxLag;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    if (!call.getMethodDescriptor()
        .getFullMethodName()
        .equals(AdminProtocolServiceGrpc.getTransferLeadershipMethod().getFullMethodName())) {
      return next.startCall(call, headers);
    }
    return new SimpleForwardingServerCallListener<Q>(next.startCall(call, headers)) {
      private boolean refused;

      @Override
      public void onMessage(Q message) {
        String why =
            message instanceof TransferLeadershipRequestProto request
                ? refusal(request, followers.get(), maxLag)
                : null;
        if (why == null) {
          super.onMessage(message);
          return;
        }
        refused = true;
        // gRPC's own status says it is a refusal; FencingAdmin reports it as UNAVAILABLE with this
        // description.
        call.close(Status.FAILED_PRECONDITION.withDescription(why), new Metadata());
      }

      @Override
      public void onHalfClose() {
        if (!refused) {
          super.onHalfClose();
        }
      }

      @Override
      public void onCancel() {
        if (!refused) {
          super.onCancel();
        }
      }

      @Override
      public void onComplete() {
        if (!refused) {
          super.onComplete();
        }
      }

      @Override
      public void onReady() {
        if (!refused) {
          super.onReady();
        }
      }
    };
  }

  /**
   * Why the transfer must be refused, or null: it names a follower that lags in {@code view} (a
   * step-down names none).
   */
  static String refusal(
      TransferLeadershipRequestProto request, List<FollowerLag> view, Duration maxLag) {
    if (!request.hasNewLeader()) {
      return null;
    }
    return AdminRules.laggingRefusal(request.getNewLeader().getId().toStringUtf8(), view, maxLag);
  }
}
