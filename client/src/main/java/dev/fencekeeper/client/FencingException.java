package dev.fencekeeper.client;

import dev.fencekeeper.proto.ResultCode;

/** A call that could not produce the result asked for; {@link #result()} carries the full context. */
public class FencingException extends RuntimeException {
  private final transient Result result;

  public FencingException(Result result) {
    super(result.toString());
    this.result = result;
  }

  public FencingException(Result result, Throwable cause) {
    super(result.toString(), cause);
    this.result = result;
  }

  public ResultCode code() {
    return result.code();
  }

  public Result result() {
    return result;
  }
}
