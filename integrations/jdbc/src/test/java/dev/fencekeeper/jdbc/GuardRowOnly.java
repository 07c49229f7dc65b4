package dev.fencekeeper.jdbc;

import javax.sql.DataSource;

/**
 * Fences for tests of the guard row's own mechanics (locks, isolation levels, dialects), which
 * present made-up raw tokens with no cluster running. They skip the cluster's check of raw tokens;
 * ClusterIssuedTokensPostgresTest covers that check.
 */
final class GuardRowOnly {
  private GuardRowOnly() {}

  static JdbcFence.Builder fence(DataSource db) {
    return JdbcFence.builder(db).tokenCheck((resource, token) -> {});
  }
}
