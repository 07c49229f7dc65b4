package dev.fencekeeper.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The guard row's contract on a real PostgreSQL: accepts, refuses, rolls back, and refuses misuse.
 */
@Timeout(120)
class JdbcFencePostgresTest {
  private DataSource db;
  private JdbcFence fence;

  @BeforeEach
  void setUp() throws SQLException {
    db = Postgres.newDatabase();
    Postgres.execute(
        db,
        "CREATE TABLE invoice (id INT PRIMARY KEY, amount INT NOT NULL, token BIGINT NOT NULL)");
    fence = GuardRowOnly.fence(db).createTable(true).build();
  }

  private SqlWork<Integer> insertInvoice(int id, long token) {
    return c -> {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO invoice VALUES (?, 100, ?)")) {
        ps.setInt(1, id);
        ps.setLong(2, token);
        return ps.executeUpdate();
      }
    };
  }

  // Guarantee: the first use of a resource inserts its guard row; the same token writes again (one
  // lease, many writes) and a newer one advances it.
  @Test
  void acceptsFirstUseTheSameTokenAgainAndNewerTokens() throws SQLException {
    assertThat(fence.acceptedToken("invoices")).isEmpty();
    assertThat(fence.inTransaction("invoices", 41, insertInvoice(1, 41))).isEqualTo(1);
    assertThat(fence.inTransaction("invoices", 41, insertInvoice(2, 41))).isEqualTo(1);
    assertThat(fence.acceptedToken("invoices")).isEqualTo(OptionalLong.of(41));
    fence.inTransaction("invoices", 42, insertInvoice(3, 42));
    assertThat(fence.acceptedToken("invoices")).isEqualTo(OptionalLong.of(42));
    assertThat(Postgres.queryLong(db, "SELECT count(*) FROM invoice")).isEqualTo(3);
    // Resources are independent: an old token of another resource is fine.
    fence.inTransaction("payroll", 7, c -> null);
    assertThat(fence.acceptedToken("payroll")).isEqualTo(OptionalLong.of(7));
  }

  // Guarantee: once a newer token committed, an older one is refused naming both tokens, its
  // statements are rolled back, and the guard row still holds the newer token.
  @Test
  void olderTokenIsRefusedAndRolledBack() throws SQLException {
    fence.inTransaction("invoices", 42, insertInvoice(1, 42));
    assertThatThrownBy(() -> fence.inTransaction("invoices", 41, insertInvoice(2, 41)))
        .isInstanceOfSatisfying(
            StaleFenceTokenException.class,
            e -> {
              assertThat(e.sentToken()).isEqualTo(41);
              assertThat(e.newerToken()).isEqualTo(42);
              assertThat(e.resource()).isEqualTo("invoices");
              assertThat(e.code().name()).isEqualTo("STALE_TOKEN");
              assertThat(e.getSQLState()).isEqualTo(StaleFenceTokenException.SQL_STATE);
              assertThat(e.getMessage()).contains("41").contains("42");
            });
    assertThat(Postgres.queryLong(db, "SELECT count(*) FROM invoice")).isEqualTo(1);
    assertThat(fence.acceptedToken("invoices")).isEqualTo(OptionalLong.of(42));
  }

  // Guarantee: the guard and the work are one transaction: a failing statement after an accepted
  // guard rolls back the guard's advance too, so a failed newer holder does not lock out the
  // current one.
  @Test
  void failedWorkRollsBackTheGuardToo() throws SQLException {
    fence.inTransaction("invoices", 41, insertInvoice(1, 41));
    assertThatThrownBy(
            () ->
                fence.inTransaction(
                    "invoices",
                    42,
                    c -> {
                      insertInvoice(2, 42).run(c);
                      return insertInvoice(2, 42).run(c); // duplicate key
                    }))
        .isInstanceOf(SQLException.class)
        .isNotInstanceOf(StaleFenceTokenException.class);
    assertThat(fence.acceptedToken("invoices")).isEqualTo(OptionalLong.of(41));
    assertThat(Postgres.queryLong(db, "SELECT count(*) FROM invoice")).isEqualTo(1);
  }

  // Guarantee: work that fails with an unchecked exception after its statements succeeded is rolled
  // back too, guard included (the connection's return to autocommit must not commit it).
  @Test
  void uncheckedFailureInWorkRollsBackEverything() throws SQLException {
    fence.inTransaction("invoices", 41, insertInvoice(1, 41));
    assertThatThrownBy(
            () ->
                fence.inTransaction(
                    "invoices",
                    42,
                    c -> {
                      insertInvoice(2, 42).run(c);
                      throw new IllegalStateException("the caller's own bug");
                    }))
        .isInstanceOf(IllegalStateException.class);
    assertThat(Postgres.queryLong(db, "SELECT count(*) FROM invoice")).isEqualTo(1);
    assertThat(fence.acceptedToken("invoices")).isEqualTo(OptionalLong.of(41));
  }

  // Guarantee: inTransaction hands the connection back in autocommit mode as it found it, also
  // through a data source that does not reset connections itself (HikariCP does; a plain shared
  // connection does not).
  @Test
  void restoresAutocommitOnTheConnectionItBorrowed() throws SQLException {
    try (Connection shared = db.getConnection()) {
      Connection borrowed =
          (Connection)
              Proxy.newProxyInstance(
                  Connection.class.getClassLoader(),
                  new Class<?>[] {Connection.class},
                  (proxy, method, args) ->
                      method.getName().equals("close") ? null : invoke(method, shared, args));
      DataSource single =
          (DataSource)
              Proxy.newProxyInstance(
                  DataSource.class.getClassLoader(),
                  new Class<?>[] {DataSource.class},
                  (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                      return borrowed;
                    }
                    throw new UnsupportedOperationException(method.getName());
                  });
      JdbcFence onShared = GuardRowOnly.fence(single).createTable(true).build();
      onShared.inTransaction("invoices", 41, insertInvoice(1, 41));
      assertThat(shared.getAutoCommit()).isTrue();
      assertThatThrownBy(() -> onShared.inTransaction("invoices", 40, insertInvoice(2, 40)))
          .isInstanceOf(StaleFenceTokenException.class);
      assertThat(shared.getAutoCommit()).isTrue();
    }
  }

  private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (java.lang.reflect.InvocationTargetException e) {
      throw e.getCause();
    }
  }

  // Guarantee: a connection in autocommit mode is refused before anything is written: the guard's
  // lock would end with its own statement.
  @Test
  void autocommitConnectionIsRefused() throws SQLException {
    try (Connection c = db.getConnection()) {
      assertThat(c.getAutoCommit()).isTrue();
      assertThatThrownBy(() -> fence.guard(c, "invoices", 41))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("autocommit");
    }
    assertThat(fence.acceptedToken("invoices")).isEmpty();
  }

  // Guarantee: guard() inside a transaction the caller manages fences it like inTransaction does.
  @Test
  void guardInsideCallerManagedTransaction() throws SQLException {
    fence.inTransaction("invoices", 42, c -> null);
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      insertInvoice(1, 41).run(c);
      assertThatThrownBy(() -> fence.guard(c, "invoices", 41))
          .isInstanceOf(StaleFenceTokenException.class);
      c.rollback();
      fence.guard(c, "invoices", 43);
      insertInvoice(2, 43).run(c);
      c.commit();
    }
    assertThat(Postgres.queryLong(db, "SELECT count(*) FROM invoice")).isEqualTo(1);
    assertThat(fence.acceptedToken("invoices")).isEqualTo(OptionalLong.of(43));
  }

  // Guarantee: bad input gets a clear error and writes nothing.
  @Test
  void rejectsBadInput() throws SQLException {
    assertThatThrownBy(() -> fence.inTransaction("", 1, c -> null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> fence.inTransaction("r", 0, c -> null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> fence.inTransaction("x".repeat(513), 1, c -> null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> JdbcFence.builder(db).table("fence; DROP TABLE invoice"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(fence.acceptedToken("r")).isEmpty();
  }

  // Guarantee: without createTable the library writes no DDL; the shipped migration creates the
  // table it needs.
  @Test
  void shippedMigrationCreatesTheTable() throws Exception {
    JdbcFence migrated = GuardRowOnly.fence(db).table("fencekeeper_fence").build();
    assertThatThrownBy(() -> migrated.inTransaction("r", 1, c -> null))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("fencekeeper_fence");
    String sql;
    try (InputStream in =
        JdbcFence.class.getResourceAsStream(
            "/db/fencekeeper/postgresql/V1__fencekeeper_fence.sql")) {
      sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    Postgres.execute(db, sql);
    migrated.inTransaction("r", 1, c -> null);
    assertThat(migrated.acceptedToken("r")).isEqualTo(OptionalLong.of(1));
  }

  // Guarantee: through a HikariCP pool the fence behaves the same, and a connection goes back to
  // the pool in autocommit mode as it came out, so the next borrower's statements are not silently
  // in a transaction.
  @Test
  void throughAHikariPool() throws SQLException {
    HikariConfig config = new HikariConfig();
    config.setDataSource(db);
    config.setMaximumPoolSize(1);
    config.setPoolName("fence-test");
    try (HikariDataSource pool = new HikariDataSource(config)) {
      JdbcFence pooled = GuardRowOnly.fence(pool).createTable(true).build();
      pooled.inTransaction("invoices", 42, insertInvoice(1, 42));
      assertThatThrownBy(() -> pooled.inTransaction("invoices", 41, insertInvoice(2, 41)))
          .isInstanceOf(StaleFenceTokenException.class);
      try (Connection c = pool.getConnection()) {
        assertThat(c.getAutoCommit()).isTrue();
        try (Statement s = c.createStatement()) {
          s.execute("INSERT INTO invoice VALUES (3, 1, 0)");
        }
      }
      assertThat(Postgres.queryLong(db, "SELECT count(*) FROM invoice")).isEqualTo(2);
    }
  }

  private int perRowUpdate(String comparison, int qty, long token) throws SQLException {
    try (Connection c = db.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE inventory SET qty = ?, last_token = ? WHERE id = 1 AND last_token "
                    + comparison
                    + " ?")) {
      ps.setInt(1, qty);
      ps.setLong(2, token);
      ps.setLong(3, token);
      return ps.executeUpdate();
    }
  }

  // Guarantee (the per-row pattern, for tables carrying their own token column): "last_token <= ?"
  // lets the holder write any number of times with its one token and refuses older tokens; the
  // seed's "<" would refuse the holder's own second write.
  @Test
  void perRowPatternNeedsLessOrEqual() throws SQLException {
    Postgres.execute(
        db,
        "CREATE TABLE inventory (id INT PRIMARY KEY, qty INT NOT NULL, last_token BIGINT NOT NULL)",
        "INSERT INTO inventory VALUES (1, 10, 0)");
    assertThat(perRowUpdate("<=", 9, 41)).isEqualTo(1);
    assertThat(perRowUpdate("<=", 8, 41)).as("the holder's second write").isEqualTo(1);
    assertThat(perRowUpdate("<=", 7, 42)).isEqualTo(1);
    assertThat(perRowUpdate("<=", 100, 41)).as("an older token").isEqualTo(0);
    assertThat(perRowUpdate("<", 6, 42))
        .as("'<' refuses the holder's own second write")
        .isEqualTo(0);
    assertThat(Postgres.queryLong(db, "SELECT qty FROM inventory")).isEqualTo(7);
  }
}
