package dev.fencekeeper.jdbc;

import java.sql.SQLException;

/** Decides whether a raw token may move a guard row; throws if not. */
@FunctionalInterface
interface TokenCheck {
  void verify(String resource, long token) throws SQLException;
}
