package dev.fencekeeper.jdbc;

import dev.fencekeeper.client.ResultCode;
import java.sql.SQLException;

/**
 * A newer token than {@link #sentToken()} exists for {@link #resource()}: the database's guard row
 * has already accepted {@link #newerToken()} (a later lease holder has written or acquired through
 * the fence), or, for a raw token, the cluster has issued it. The transaction was rolled back, or
 * never opened, and must not be retried with the same token. An {@link SQLException} so it travels
 * through {@link SqlWork}, pools and transaction managers like any other database refusal; its
 * SQLState is {@value #SQL_STATE}, outside the standard's transient classes, so generic retry logic
 * leaves it alone.
 *
 * <p>{@link #code()} is the client's {@link ResultCode#STALE_TOKEN}, the code a fenced write to the
 * cluster itself gets for the same reason.
 */
public class StaleFenceTokenException extends SQLException {
  private static final long serialVersionUID = 1L;

  /** SQLState of a stale-token refusal (class "FK": fencekeeper, implementation-defined). */
  public static final String SQL_STATE = "FK001";

  private final String resource;
  private final long sentToken;
  private final long newerToken;

  public StaleFenceTokenException(String resource, long sentToken, long newerToken) {
    this(
        "STALE_TOKEN: resource '"
            + resource
            + "' sent token "
            + sentToken
            + " but the database has accepted"
            + " token "
            + newerToken
            + "; the transaction was rolled back",
        resource,
        sentToken,
        newerToken);
  }

  private StaleFenceTokenException(
      String message, String resource, long sentToken, long newerToken) {
    super(message, SQL_STATE);
    this.resource = resource;
    this.sentToken = sentToken;
    this.newerToken = newerToken;
  }

  /** The cluster answered a raw token's check with STALE: it has issued {@code newerToken}. */
  static StaleFenceTokenException issuedSince(String resource, long sentToken, long newerToken) {
    return new StaleFenceTokenException(
        "STALE_TOKEN: resource '"
            + resource
            + "' sent token "
            + sentToken
            + " but the cluster has issued token "
            + newerToken
            + " for it since; the guard row was not touched",
        resource,
        sentToken,
        newerToken);
  }

  public ResultCode code() {
    return ResultCode.STALE_TOKEN;
  }

  public String resource() {
    return resource;
  }

  /** The token this transaction presented. */
  public long sentToken() {
    return sentToken;
  }

  /**
   * The newest token the guard row had accepted when it refused {@link #sentToken()}, or the
   * cluster's newest for the resource when it refused a raw token.
   */
  public long newerToken() {
    return newerToken;
  }
}
