package dev.fencekeeper.jdbc;

import dev.fencekeeper.client.ResultCode;
import java.sql.SQLException;

/**
 * The database's guard row for {@link #resource()} has already accepted {@link #newerToken()},
 * which is newer than {@link #sentToken()}: a later lease holder has written, so this transaction
 * was rolled back and must not be retried with the same token. An {@link SQLException} so it
 * travels through {@link SqlWork}, pools and transaction managers like any other database refusal;
 * its SQLState is {@value #SQL_STATE}, outside the standard's transient classes, so generic retry
 * logic leaves it alone.
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
    super(
        "STALE_TOKEN: resource '"
            + resource
            + "' sent token "
            + sentToken
            + " but the database has accepted"
            + " token "
            + newerToken
            + "; the transaction was rolled back",
        SQL_STATE);
    this.resource = resource;
    this.sentToken = sentToken;
    this.newerToken = newerToken;
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

  /** The newest token the guard row had accepted when it refused {@link #sentToken()}. */
  public long newerToken() {
    return newerToken;
  }
}
