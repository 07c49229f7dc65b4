package dev.fencekeeper.client;

/** An acquire found a live lease; {@link #result()} names the holder's token, owner and deadline. */
public final class LeaseHeldException extends FencingException {
  public LeaseHeldException(Result result) {
    super(result);
  }
}
