package dev.fencekeeper.jdbc;

import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;

/**
 * The SQL each supported database needs for the guard row. Each one is tested against the real
 * server; a database not listed here has a recipe in docs/external-stores.md instead of untested
 * code.
 */
public enum FenceDialect {
  /**
   * PostgreSQL 9.5+: one {@code INSERT … ON CONFLICT … DO UPDATE … WHERE} inserts the row on first
   * use or advances it. PostgreSQL locks the conflicting row even when the {@code WHERE} rejects
   * the update, and under READ COMMITTED re-evaluates the {@code WHERE} on the newest committed
   * version after waiting for a concurrent writer, so a waiting older token sees the newer one and
   * is refused.
   */
  POSTGRESQL(
      "INSERT INTO %1$s (resource, token, written_at) VALUES (?, ?, CURRENT_TIMESTAMP) ON CONFLICT"
          + " (resource) DO UPDATE SET token = EXCLUDED.token, written_at = EXCLUDED.written_at"
          + " WHERE %1$s.token <= EXCLUDED.token",
      "CREATE TABLE IF NOT EXISTS %s (resource VARCHAR(512) PRIMARY KEY, token BIGINT NOT NULL,"
          + " written_at TIMESTAMP WITH TIME ZONE NOT NULL)"),
  /**
   * H2 2.x: a standard {@code MERGE} with a guarded {@code WHEN MATCHED}; the row is locked by the
   * update.
   */
  H2(
      "MERGE INTO %1$s t USING (VALUES (CAST(? AS VARCHAR(512)), CAST(? AS BIGINT))) AS s(resource,"
          + " token) ON t.resource = s.resource WHEN MATCHED AND t.token <= s.token THEN UPDATE SET"
          + " token = s.token, written_at = CURRENT_TIMESTAMP WHEN NOT MATCHED THEN INSERT"
          + " (resource, token, written_at) VALUES (s.resource, s.token, CURRENT_TIMESTAMP)",
      "CREATE TABLE IF NOT EXISTS %s (resource VARCHAR(512) PRIMARY KEY, token BIGINT NOT NULL,"
          + " written_at TIMESTAMP WITH TIME ZONE NOT NULL)"),
  /**
   * MariaDB 10.x (InnoDB): {@code INSERT … ON DUPLICATE KEY UPDATE} takes the row's exclusive lock
   * and sets the token to the larger of the two; a locking read ({@code FOR UPDATE}, which sees the
   * newest version also under REPEATABLE READ) then decides. The update count cannot: with the
   * driver's default "found rows" counting, an unchanged row and an advanced one look alike.
   */
  MARIADB(
      "INSERT INTO %1$s (resource, token, written_at) VALUES (?, ?, NOW(6)) ON DUPLICATE KEY UPDATE"
          + " written_at = IF(token <= VALUES(token), VALUES(written_at), written_at),"
          + " token = IF(token <= VALUES(token), VALUES(token), token)",
      "CREATE TABLE IF NOT EXISTS %s (resource VARCHAR(512) PRIMARY KEY, token BIGINT NOT NULL,"
          + " written_at DATETIME(6) NOT NULL) ENGINE=InnoDB") {
    @Override
    boolean updateCountDecides() {
      return false;
    }
  };

  private final String guardSql;
  private final String createSql;

  FenceDialect(String guardSql, String createSql) {
    this.guardSql = guardSql;
    this.createSql = createSql;
  }

  /**
   * The one statement that accepts {@code (resource, token)}: parameters 1 = resource, 2 = token;
   * where {@link #updateCountDecides()}, an update count of 1 means accepted (row inserted or
   * advanced) and 0 means a newer token is in the row.
   */
  public String guardStatement(String table) {
    return String.format(Locale.ROOT, guardSql, table);
  }

  /** Creates the fence table if it does not exist (the shipped migration says the same). */
  public String createTableStatement(String table) {
    return String.format(Locale.ROOT, createSql, table);
  }

  /** The newest accepted token of one resource: parameter 1 = resource. */
  public String currentTokenQuery(String table) {
    return "SELECT token FROM " + table + " WHERE resource = ?";
  }

  /** As {@link #currentTokenQuery}, reading the newest row version under the transaction's lock. */
  String lockingTokenQuery(String table) {
    return currentTokenQuery(table) + " FOR UPDATE";
  }

  /**
   * Whether the guard statement's update count alone says accepted (1) or stale (0); if not, the
   * row's token read with {@link #lockingTokenQuery} after it does.
   */
  boolean updateCountDecides() {
    return true;
  }

  /** Picks the dialect from the driver's product name. */
  public static FenceDialect detect(DatabaseMetaData metaData) throws SQLException {
    String product = metaData.getDatabaseProductName();
    String lower = product == null ? "" : product.toLowerCase(Locale.ROOT);
    if (lower.contains("postgresql")) {
      return POSTGRESQL;
    }
    if (lower.equals("h2")) {
      return H2;
    }
    if (lower.contains("mariadb")) {
      return MARIADB;
    }
    throw new SQLException(
        "fencekeeper-jdbc has no tested dialect for database '"
            + product
            + "' (supported: PostgreSQL, H2, MariaDB); see docs/external-stores.md for the recipe"
            + " for other databases");
  }
}
