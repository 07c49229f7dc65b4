package dev.fencekeeper.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * The caller's statements, run on the fenced transaction's connection after the guard row accepted
 * the token. Do not commit, roll back or change autocommit on {@code connection}: {@link JdbcFence}
 * owns the transaction.
 */
@FunctionalInterface
public interface SqlWork<T> {
  T run(Connection connection) throws SQLException;
}
