package dev.fencekeeper.client;

/**
 * An acquire found a live lease; {@link #result()} names the holder's token, owner and deadline.
 */
public final class LeaseHeldException extends FencingException {
  private static final long serialVersionUID = 1L;

  /** The HELD answer (or the last answer of a wait that ran out). */
  public LeaseHeldException(Result result) {
    super(result);
  }
}
