package dev.fencekeeper.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The same guard-row contract on H2 2.x (in memory), whose dialect is a guarded MERGE. */
@Timeout(60)
class H2FenceTest {
  private JdbcDataSource db;
  private JdbcFence fence;

  @BeforeEach
  void setUp() throws SQLException {
    db = new JdbcDataSource();
    db.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=20000");
    fence = JdbcFence.builder(db).createTable(true).build();
    try (Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE note (id INT PRIMARY KEY, token BIGINT)");
    }
  }

  private static SqlWork<Void> note(int id, long token) {
    return c -> {
      try (Statement s = c.createStatement()) {
        s.executeUpdate("INSERT INTO note VALUES (" + id + ", " + token + ")");
      }
      return null;
    };
  }

  private long notes() throws SQLException {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        var rs = s.executeQuery("SELECT count(*) FROM note")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  // Guarantee: first use inserts, the same token writes again, a newer one advances, an older one
  // is refused
  // naming both tokens and its statements are rolled back.
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
    try (java.io.InputStream in =
        JdbcFence.class.getResourceAsStream("/db/fencekeeper/h2/V1__fencekeeper_fence.sql")) {
      sql = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    try (Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          sql.lines()
              .filter(line -> !line.startsWith("--"))
              .collect(java.util.stream.Collectors.joining("\n")));
    }
    JdbcFence migrated = JdbcFence.builder(db).build();
    migrated.inTransaction("migrated", 5, note(9, 5));
    assertThat(migrated.acceptedToken("migrated")).isEqualTo(OptionalLong.of(5));
    assertThatThrownBy(() -> migrated.inTransaction("migrated", 4, note(10, 4)))
        .isInstanceOf(StaleFenceTokenException.class);
  }

  // Guarantee: an older token waiting on the newer holder's guard-row lock is refused once the
  // newer commits.
  @Test
  void olderTokenWaitingBehindNewerIsRefused() throws Exception {
    fence.inTransaction("r", 40, c -> null);
    ExecutorService second = Executors.newSingleThreadExecutor();
    try (Connection newer = db.getConnection()) {
      newer.setAutoCommit(false);
      fence.guard(newer, "r", 42);
      note(1, 42).run(newer);
      Future<Void> older = second.submit(() -> fence.inTransaction("r", 41, note(2, 41)));
      assertThatThrownBy(() -> older.get(700, TimeUnit.MILLISECONDS))
          .isInstanceOf(TimeoutException.class);
      newer.commit();
      assertThatThrownBy(() -> older.get(30, TimeUnit.SECONDS))
          .hasCauseInstanceOf(StaleFenceTokenException.class);
    } finally {
      second.shutdownNow();
    }
    assertThat(notes()).isEqualTo(1);
    assertThat(fence.acceptedToken("r")).isEqualTo(OptionalLong.of(42));
  }
}
