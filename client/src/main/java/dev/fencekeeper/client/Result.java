package dev.fencekeeper.client;

import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.nio.charset.StandardCharsets;

/**
 * The answer to one fencekeeper call: a {@link ResultCode} and the context that explains it. Rejections
 * are results, not exceptions: a stale write is an expected outcome that a worker must handle.
 */
public class Result {
  final Response response;

  Result(Response response) {
    this.response = response;
  }

  public ResultCode code() {
    return response.getCode();
  }

  /** True for every code that means "done as asked" (GRANTED, RENEWED, RELEASED, ACCEPTED, FOUND, ...). */
  public boolean isSuccess() {
    return switch (code()) {
      case GRANTED, RENEWED, RELEASED, ACCEPTED, FOUND, NOT_FOUND, CURRENT, REVOKED -> true;
      default -> false;
    };
  }

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

  public String holderOwner() {
    return response.getHolderOwner();
  }

  /** Lease deadline in state-machine time (the leaders' wall clocks, epoch milliseconds). */
  public long expiresAtMs() {
    return response.getExpiresAtMs();
  }

  public long ttlMs() {
    return response.getTtlMs();
  }

  public boolean alreadyEnded() {
    return response.getAlreadyEnded();
  }

  public boolean live() {
    return response.getLive();
  }

  /** For WAITING: the log index of the entry that answered; events before it cannot grant this waiter. */
  public long appliedIndex() {
    return response.getAppliedIndex();
  }

  /** For WAITING: the place in line, 1 being next. */
  public int position() {
    return response.getPosition();
  }

  public byte[] value() {
    return response.getValue().toByteArray();
  }

  public String valueAsString() {
    return response.getValue().toString(StandardCharsets.UTF_8);
  }

  public long acceptedToken() {
    return response.getAcceptedToken();
  }

  public long version() {
    return response.getVersion();
  }

  public long writtenAtMs() {
    return response.getWrittenAtMs();
  }

  public String key() {
    return response.getKey();
  }

  /** State-machine time at which the answer was computed. */
  public long nowMs() {
    return response.getNowMs();
  }

  /** The wire message, for tools that print every field. */
  public Response toProto() {
    return response;
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
