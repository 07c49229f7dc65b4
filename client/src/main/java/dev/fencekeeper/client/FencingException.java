package dev.fencekeeper.client;

/**
 * A call that could not produce the result asked for; {@link #result()} carries the full context.
 */
public class FencingException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Result result;

  /** A failure described by {@code result}. */
  public FencingException(Result result) {
    super(result.toString());
    this.result = result;
  }

  /** A failure described by {@code result}, caused by {@code cause}. */
  public FencingException(Result result, Throwable cause) {
    super(result.toString(), cause);
    this.result = result;
  }

  /** The result code of the failure. */
  public ResultCode code() {
    return result.code();
  }

  /** The full answer: code, message, tokens and holder. */
  public Result result() {
    return result;
  }
}
