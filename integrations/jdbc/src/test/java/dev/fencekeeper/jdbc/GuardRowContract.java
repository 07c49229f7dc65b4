package dev.fencekeeper.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The guard-row contract checked the same way on every embedded database: a subclass supplies a
 * fresh database per test, the DDL of the {@code note} table the work writes to, and the folder of
 * its dialect's shipped migration; it adds the tests its dialect's locking needs.
 */
abstract class GuardRowContract {
  DataSource db;
  JdbcFence fence;

  /** A new, empty database for one test. */
  abstract DataSource newDatabase() throws SQLException;

  /** {@code CREATE TABLE note (id INT PRIMARY KEY, token BIGINT)} in the dialect. */
  abstract String createNoteTable();

  /** The dialect's folder under {@code db/fencekeeper/}, e.g. {@code h2}. */
  abstract String migrationFolder();

  @BeforeEach
  final void createFenceAndNoteTable() throws SQLException {
    db = newDatabase();
    fence = GuardRowOnly.fence(db).createTable(true).build();
    try (Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      s.execute(createNoteTable());
    }
  }

  static SqlWork<Void> note(int id, long token) {
    return c -> {
      try (Statement s = c.createStatement()) {
        s.executeUpdate("INSERT INTO note VALUES (" + id + ", " + token + ")");
      }
      return null;
    };
  }

  long notes() throws SQLException {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        var rs = s.executeQuery("SELECT count(*) FROM note")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  // Guarantee: first use inserts, the same token writes again (also when nothing about the row
  // changes), a newer one advances, an older one is refused naming both tokens and its statements
  // are rolled back.
  @Test
  void acceptsAndRefusesLikePostgres() throws SQLException {
    fence.inTransaction("r", 41, note(1, 41));
    fence.inTransaction("r", 41, note(2, 41));
    fence.inTransaction("r", 42, note(3, 42));
    assertThatThrownBy(() -> fence.inTransaction("r", 41, note(4, 41)))
        .isInstanceOfSatisfying(
            StaleFenceTokenException.class,
            e -> {
              assertThat(e.sentToken()).isEqualTo(41);
              assertThat(e.newerToken()).isEqualTo(42);
            });
    assertThat(notes()).isEqualTo(3);
    assertThat(fence.acceptedToken("r")).isEqualTo(OptionalLong.of(42));
  }

  // Guarantee: the shipped migration creates the table the fence needs, without createTable.
  @Test
  void shippedMigrationCreatesTheTable() throws Exception {
    String sql;
    String migration = "/db/fencekeeper/" + migrationFolder() + "/V1__fencekeeper_fence.sql";
    try (InputStream in = JdbcFence.class.getResourceAsStream(migration)) {
      assertThat(in).as(migration).isNotNull();
      sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    try (Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          sql.lines().filter(line -> !line.startsWith("--")).collect(Collectors.joining("\n")));
    }
    JdbcFence migrated = GuardRowOnly.fence(db).build();
    migrated.inTransaction("migrated", 5, note(9, 5));
    assertThat(migrated.acceptedToken("migrated")).isEqualTo(OptionalLong.of(5));
    assertThatThrownBy(() -> migrated.inTransaction("migrated", 4, note(10, 4)))
        .isInstanceOf(StaleFenceTokenException.class);
  }
}
