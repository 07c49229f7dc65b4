package dev.fencekeeper.client;

import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;

/** How {@link FencingAdmin} reports what went wrong: a {@link FencingException} with a result. */
final class AdminFailures {
  private AdminFailures() {}

  /**
   * {@code e} as UNAVAILABLE, unless it already is a FencingException (thrown by a check inside).
   */
  static FencingException failed(String what, Exception e) {
    if (e instanceof FencingException f) {
      return f;
    }
    // A node's own refusal is an answer, not an outage: PERMISSION_DENIED for an identity not in
    // authz.admins, FAILED_PRECONDITION for a transfer to a follower the leader counts as lagging.
    Status refused = refusedByNode(e);
    if (refused == null) {
      return unavailable(what + " failed: " + describe(e), e);
    }
    return refused.getCode() == Status.Code.PERMISSION_DENIED
        ? failure(ResultCode.PERMISSION_DENIED, refused.getDescription(), e)
        : unavailable(what + " refused: " + refused.getDescription(), e);
  }

  /** The status a node refused the call with, when it did; null for any other failure. */
  static Status refusedByNode(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof StatusRuntimeException refused
          && (refused.getStatus().getCode() == Status.Code.PERMISSION_DENIED
              || refused.getStatus().getCode() == Status.Code.FAILED_PRECONDITION)) {
        return refused.getStatus();
      }
    }
    return null;
  }

  /**
   * The exception's message and its root cause's: gRPC's own says only "UNAVAILABLE: io exception".
   */
  static String describe(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    if (root != e) {
      message +=
          " ("
              + (root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName())
              + ")";
    }
    return message;
  }

  static void check(RaftClientReply reply, String what) {
    if (!reply.isSuccess()) {
      throw unavailable(what + " failed: " + reply.getException(), reply.getException());
    }
  }

  static FencingException invalid(String message) {
    return failure(ResultCode.INVALID_ARGUMENT, message, null);
  }

  static FencingException notFound(String message) {
    return failure(ResultCode.NOT_FOUND, message, null);
  }

  static FencingException unavailable(String message, Throwable cause) {
    return failure(ResultCode.UNAVAILABLE, message, cause);
  }

  static FencingException failure(ResultCode code, String message, Throwable cause) {
    Result result = new Result(Response.newBuilder().setCode(code).setMessage(message).build());
    return cause == null ? new FencingException(result) : new FencingException(result, cause);
  }
}
