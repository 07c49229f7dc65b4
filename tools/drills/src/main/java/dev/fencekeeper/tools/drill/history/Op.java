package dev.fencekeeper.tools.drill.history;

/**
 * One client operation as the history checker sees it: who did what, when it was invoked and when
 * its answer arrived (nanoseconds of one monotonic clock), and what the cluster said.
 *
 * @param id unique within a history, in invocation order
 * @param process the worker that issued it (a process in Jepsen's sense: one operation at a time)
 * @param type what was asked
 * @param resource the lock name
 * @param key the protected key (writes and reads), else null
 * @param token the token sent (renew, release, write), else 0
 * @param value the value written, else null
 * @param invokeNanos when the request was sent
 * @param completeNanos when the answer arrived; {@link Long#MAX_VALUE} for {@link Outcome#UNKNOWN}
 * @param outcome ok, definitely rejected, or unknown
 * @param code the result code as the cluster (or the client, for UNAVAILABLE) named it
 * @param result what the answer carried
 */
public record Op(
    int id,
    String process,
    OpType type,
    String resource,
    String key,
    long token,
    String value,
    long invokeNanos,
    long completeNanos,
    Outcome outcome,
    String code,
    Result result) {

  public enum OpType {
    ACQUIRE,
    RENEW,
    RELEASE,
    WRITE,
    READ
  }

  /** UNKNOWN: the command may or may not have been applied (timeout, no node answered). */
  public enum Outcome {
    OK,
    FAIL,
    UNKNOWN
  }

  /**
   * What an answer carried. Zero / null where the answer had nothing.
   *
   * @param token ACQUIRE: the granted token
   * @param version WRITE/READ: the key's version (count of accepted writes) after the write / at
   *     the read
   * @param acceptedToken WRITE/READ: the key's accepted token
   * @param readValue READ: the value read; null when the key was not found
   * @param smTimeMs state-machine time at which the answer was computed (for an accepted write: its
   *     commit)
   * @param expiresAtMs ACQUIRE/RENEW: the lease's deadline in state-machine time
   */
  public record Result(
      long token,
      long version,
      long acceptedToken,
      String readValue,
      long smTimeMs,
      long expiresAtMs) {
    public static final Result NONE = new Result(0, 0, 0, null, 0, 0);
  }

  public boolean ok() {
    return outcome == Outcome.OK;
  }

  /** Definitely rejected: the command changed nothing. */
  public boolean failed() {
    return outcome == Outcome.FAIL;
  }

  /** Possibly applied: an OK answer, or no answer at all. */
  public boolean possiblyApplied() {
    return outcome != Outcome.FAIL;
  }

  /** One line for timelines and violation reports. */
  public String describe() {
    StringBuilder s =
        new StringBuilder()
            .append('#')
            .append(id)
            .append(' ')
            .append(process)
            .append(' ')
            .append(type.name().toLowerCase())
            .append(' ')
            .append(resource);
    if (key != null) {
      s.append('/').append(key);
    }
    if (token != 0) {
      s.append(" token ").append(token);
    }
    if (value != null) {
      s.append(" value ").append(value);
    }
    s.append(" -> ").append(code);
    switch (type) {
      case ACQUIRE -> {
        if (ok()) {
          s.append(" token ").append(result.token());
        }
      }
      case WRITE -> {
        if (ok()) {
          s.append(" version ").append(result.version());
        }
      }
      case READ -> {
        if (ok()) {
          s.append(' ')
              .append(result.readValue() == null ? "(not found)" : result.readValue())
              .append(" version ")
              .append(result.version())
              .append(" accepted-token ")
              .append(result.acceptedToken());
        }
      }
      default -> {}
    }
    if (ok() && result.smTimeMs() != 0) {
      s.append(" at sm-time ").append(result.smTimeMs());
    }
    return s.toString();
  }
}
