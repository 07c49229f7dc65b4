package dev.fencekeeper.client;

import dev.fencekeeper.proto.Response;
import java.nio.charset.StandardCharsets;

/**
 * The answer to one fencekeeper call: a {@link ResultCode} and the context that explains it.
 * Rejections are results, not exceptions: a stale write is an expected outcome that a worker must
 * handle.
 */
public class Result {
  final Response response;

  Result(Response response) {
    this.response = response;
  }

  /** What the cluster answered, or UNAVAILABLE when no node did. */
  public ResultCode code() {
    return ResultCode.of(response.getCode());
  }

  /** Whether the call was done as asked ({@link ResultCode#isSuccess}). */
  public boolean isSuccess() {
    return code().isSuccess();
  }

  /**
   * This result if the call did as asked ({@link #isSuccess()}); otherwise throws it as a {@link
   * FencingException}, for code that treats every other answer as a failure.
   *
   * @throws FencingException carrying this result when it is not a success
   */
  public Result orThrow() {
    if (!isSuccess()) {
      throw new FencingException(this);
    }
    return this;
  }

  /** Human-readable context, always set on rejections; empty otherwise. */
  public String message() {
    return response.getMessage();
  }

  /** The lease token this result is about (granted, renewed, or the holder's on HELD). */
  public long token() {
    return response.getToken();
  }

  /** The newest token issued for the resource. */
  public long currentToken() {
    return response.getCurrentToken();
  }

  /** The token the caller sent, echoed on rejections. */
  public long sentToken() {
    return response.getSentToken();
  }

  /** The owner label of the live lease, if any. */
  public String holderOwner() {
    return response.getHolderOwner();
  }

  /** Lease deadline in state-machine time (the leaders' wall clocks, epoch milliseconds). */
  public long expiresAtMs() {
    return response.getExpiresAtMs();
  }

  /** The lease's TTL in milliseconds (acquire, renew, lease queries). */
  public long ttlMs() {
    return response.getTtlMs();
  }

  /** For a release: the lease had ended before this call. */
  public boolean alreadyEnded() {
    return response.getAlreadyEnded();
  }

  /**
   * For a lease query: a live lease exists; for an acquire retried by request id: it still runs.
   */
  public boolean live() {
    return response.getLive();
  }

  /**
   * For WAITING: the log index of the entry that answered; events before it cannot grant this
   * waiter.
   */
  public long appliedIndex() {
    return response.getAppliedIndex();
  }

  /** For WAITING: the place in line, 1 being next. */
  public int position() {
    return response.getPosition();
  }

  /** For a read: the value's bytes (a copy). */
  public byte[] value() {
    return response.getValue().toByteArray();
  }

  /** For a read: the value decoded as UTF-8. */
  public String valueAsString() {
    return response.getValue().toString(StandardCharsets.UTF_8);
  }

  /** For a read or write: the highest token whose write the key accepted. */
  public long acceptedToken() {
    return response.getAcceptedToken();
  }

  /** For a read or write: the number of accepted writes of the key. */
  public long version() {
    return response.getVersion();
  }

  /** For a read: state-machine time of the last accepted write. */
  public long writtenAtMs() {
    return response.getWrittenAtMs();
  }

  /** For a write rejection: the key that failed the check, when one did. */
  public String key() {
    return response.getKey();
  }

  /** State-machine time at which the answer was computed. */
  public long nowMs() {
    return response.getNowMs();
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder(code().name());
    if (token() != 0) s.append(" token=").append(token());
    if (currentToken() != 0) s.append(" currentToken=").append(currentToken());
    if (sentToken() != 0) s.append(" sentToken=").append(sentToken());
    if (!holderOwner().isEmpty()) s.append(" holder=").append(holderOwner());
    if (!message().isEmpty()) s.append(" (").append(message()).append(')');
    return s.toString();
  }
}
