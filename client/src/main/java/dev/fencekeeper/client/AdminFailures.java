package dev.fencekeeper.client;

import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;

/** How {@link FencingAdmin} reports what went wrong: a {@link FencingException} with a result. */
final class AdminFailures {
  private AdminFailures() {}

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
