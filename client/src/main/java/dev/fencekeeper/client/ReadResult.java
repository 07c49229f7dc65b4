package dev.fencekeeper.client;

import dev.fencekeeper.proto.Response;

/** A protected value as stored: bytes, the highest token it accepted, and its version. */
public final class ReadResult extends Result {
  ReadResult(Response response) {
    super(response);
  }

  /** The key exists; {@link #value()} holds it. */
  public boolean isFound() {
    return code() == ResultCode.FOUND;
  }
}
