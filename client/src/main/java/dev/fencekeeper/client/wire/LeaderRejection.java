package dev.fencekeeper.client.wire;

import dev.fencekeeper.proto.Response;
import java.util.Base64;
import java.util.Optional;
import org.apache.ratis.protocol.exceptions.ResourceUnavailableException;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;

/**
 * Carries a complete {@link Response} through Ratis's exception channel. A node that refuses a
 * request before logging it (overloaded, not authorized, not decodable) can only answer with an
 * exception, so the response travels inside its message and the client turns it back into an
 * ordinary result.
 */
public final class LeaderRejection {
  private static final String MARKER = "fencekeeper-response:";

  private LeaderRejection() {}

  public static String encode(Response response) {
    return MARKER + Base64.getEncoder().encodeToString(response.toByteArray());
  }

  /** The response carried anywhere in {@code error}'s cause chain, if there is one. */
  public static Optional<Response> decode(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String message = t.getMessage();
      int at = message == null ? -1 : message.indexOf(MARKER);
      if (at < 0) {
        continue;
      }
      int start = at + MARKER.length();
      int end = start;
      while (end < message.length() && isBase64(message.charAt(end))) {
        end++;
      }
      try {
        return Optional.of(
            Response.parseFrom(Base64.getDecoder().decode(message.substring(start, end))));
      } catch (IllegalArgumentException | InvalidProtocolBufferException e) {
        return Optional.empty();
      }
    }
    return Optional.empty();
  }

  /**
   * {@code policy}, except that a node's own refusal is never retried: it is an answer (a retry
   * would only be refused again), not a failure to reach the cluster.
   */
  public static RetryPolicy notRetried(RetryPolicy policy) {
    return event ->
        decode(event.getCause()).isPresent()
            ? RetryPolicy.NO_RETRY_ACTION
            : policy.handleAttemptFailure(event);
  }

  /**
   * {@code normal}, except that a full leader queue ({@link #isOverload}) is retried by {@code
   * overload}.
   */
  public static RetryPolicy backingOffWhenOverloaded(RetryPolicy normal, RetryPolicy overload) {
    return event ->
        isOverload(event.getCause())
            ? overload.handleAttemptFailure(event)
            : normal.handleAttemptFailure(event);
  }

  /** True when {@code error}'s cause chain says the leader's queue of pending requests was full. */
  public static boolean isOverload(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof ResourceUnavailableException) {
        return true;
      }
    }
    return false;
  }

  private static boolean isBase64(char c) {
    return (c >= 'A' && c <= 'Z')
        || (c >= 'a' && c <= 'z')
        || (c >= '0' && c <= '9')
        || c == '+'
        || c == '/'
        || c == '=';
  }
}
