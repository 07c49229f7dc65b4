package dev.fencekeeper.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What two concurrent writers of one resource see under each isolation level on PostgreSQL. In
 * every case an older token never commits after a newer one; where PostgreSQL cannot re-evaluate
 * the guard on the newest row (REPEATABLE READ, SERIALIZABLE) the loser gets the driver's
 * serialization failure (SQLState 40001), which the application retries as a new transaction — it
 * is never reported as an accepted write.
 */
@Timeout(120)
class IsolationLevelsPostgresTest {
  private static final String SERIALIZATION_FAILURE = "40001";
  private static final Duration BLOCKED_FOR = Duration.ofMillis(700);

  enum Level {
    READ_COMMITTED(Connection.TRANSACTION_READ_COMMITTED),
    REPEATABLE_READ(Connection.TRANSACTION_REPEATABLE_READ),
    SERIALIZABLE(Connection.TRANSACTION_SERIALIZABLE);

    final int jdbc;

    Level(int jdbc) {
      this.jdbc = jdbc;
    }
  }

  private DataSource db;
  private JdbcFence fence;
  private ExecutorService second;

  @BeforeEach
  void setUp() throws SQLException {
    db = Postgres.newDatabase();
    fence = GuardRowOnly.fence(db).createTable(true).build();
    fence.createTable();
    Postgres.execute(db, "CREATE TABLE report (day TEXT PRIMARY KEY, body TEXT NOT NULL)");
    fence.inTransaction("report", 40, c -> null);
    second = Executors.newSingleThreadExecutor();
  }

  @AfterEach
  void tearDown() {
    second.shutdownNow();
  }

  private Connection begin(Level level) throws SQLException {
    Connection c = db.getConnection();
    c.setAutoCommit(false);
    c.setTransactionIsolation(level.jdbc);
    return c;
  }

  private static void write(Connection c, String body) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.executeUpdate(
          "INSERT INTO report VALUES ('2026-11-29', '"
              + body
              + "')"
              + " ON CONFLICT (day) DO UPDATE SET body = EXCLUDED.body");
    }
  }

  private String body() throws SQLException {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        var rs = s.executeQuery("SELECT body FROM report")) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  /**
   * Runs guard + write + commit of {@code token} on another thread; it must block behind the open
   * holder.
   */
  private Future<Void> blockedWriter(Level level, long token) throws Exception {
    Future<Void> waiting =
        second.submit(
            () -> {
              try (Connection c = begin(level)) {
                try {
                  fence.guard(c, "report", token);
                  write(c, "token " + token);
                  c.commit();
                } catch (SQLException e) {
                  c.rollback();
                  throw e;
                }
              }
              return null;
            });
    assertThatThrownBy(() -> waiting.get(BLOCKED_FOR.toMillis(), TimeUnit.MILLISECONDS))
        .as("the second writer waits for the first one's guard-row lock")
        .isInstanceOf(TimeoutException.class);
    return waiting;
  }

  private static Throwable failureOf(Future<Void> f) throws InterruptedException, TimeoutException {
    try {
      f.get(30, TimeUnit.SECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    }
  }

  // Guarantee: an older token that waited behind a newer holder's lock is refused once the newer
  // commits — as stale under READ COMMITTED, as a serialization failure under the snapshot levels;
  // never accepted.
  @ParameterizedTest
  @EnumSource(Level.class)
  void olderTokenWaitingBehindNewerIsRefused(Level level) throws Exception {
    try (Connection newer = begin(level)) {
      fence.guard(newer, "report", 42);
      write(newer, "token 42");
      Future<Void> older = blockedWriter(level, 41);
      newer.commit();
      Throwable failure = failureOf(older);
      assertThat(failure).as("token 41 must not commit after 42").isNotNull();
      if (level == Level.READ_COMMITTED) {
        assertThat(failure)
            .isInstanceOfSatisfying(
                StaleFenceTokenException.class, e -> assertThat(e.newerToken()).isEqualTo(42));
      } else {
        assertThat(failure)
            .isInstanceOf(SQLException.class)
            .isNotInstanceOf(StaleFenceTokenException.class);
        assertThat(((SQLException) failure).getSQLState()).isEqualTo(SERIALIZATION_FAILURE);
      }
    }
    assertThat(fence.acceptedToken("report")).isEqualTo(OptionalLong.of(42));
    assertThat(body()).isEqualTo("token 42");
  }

  // Guarantee: a newer token waiting behind an older holder commits after it under READ COMMITTED;
  // under the snapshot levels it gets a serialization failure (not a stale refusal, not a silent
  // success), and its retry as a new transaction is accepted.
  @ParameterizedTest
  @EnumSource(Level.class)
  void newerTokenWaitingBehindOlderCommitsOrMustRetry(Level level) throws Exception {
    try (Connection older = begin(level)) {
      fence.guard(older, "report", 41);
      write(older, "token 41");
      Future<Void> newer = blockedWriter(level, 43);
      older.commit();
      Throwable failure = failureOf(newer);
      if (level == Level.READ_COMMITTED) {
        assertThat(failure).isNull();
      } else {
        assertThat(failure)
            .isInstanceOf(SQLException.class)
            .isNotInstanceOf(StaleFenceTokenException.class);
        assertThat(((SQLException) failure).getSQLState()).isEqualTo(SERIALIZATION_FAILURE);
        assertThat(fence.acceptedToken("report")).isEqualTo(OptionalLong.of(41));
        assertThat(body()).isEqualTo("token 41");
        try (Connection retry = begin(level)) {
          fence.guard(retry, "report", 43);
          write(retry, "token 43");
          retry.commit();
        }
      }
    }
    assertThat(fence.acceptedToken("report")).isEqualTo(OptionalLong.of(43));
    assertThat(body()).isEqualTo("token 43");
  }

  // Guarantee: a transaction whose snapshot predates a newer holder's commit (it read first, then
  // guards) is refused: stale under READ COMMITTED (each statement sees the newest row),
  // serialization failure under the snapshot levels (the row changed after its snapshot).
  @ParameterizedTest
  @EnumSource(Level.class)
  void snapshotTakenBeforeNewerCommitIsRefused(Level level) throws Exception {
    try (Connection stale = begin(level)) {
      body(stale);
      fence.inTransaction(
          "report",
          42,
          c -> {
            write(c, "token 42");
            return null;
          });
      Throwable failure = null;
      try {
        fence.guard(stale, "report", 41);
        write(stale, "token 41");
        stale.commit();
      } catch (SQLException e) {
        failure = e;
        stale.rollback();
      }
      assertThat(failure).as("token 41 must not commit after 42").isNotNull();
      if (level == Level.READ_COMMITTED) {
        assertThat(failure).isInstanceOf(StaleFenceTokenException.class);
      } else {
        assertThat(((SQLException) failure).getSQLState()).isEqualTo(SERIALIZATION_FAILURE);
      }
    }
    assertThat(fence.acceptedToken("report")).isEqualTo(OptionalLong.of(42));
    assertThat(body()).isEqualTo("token 42");
  }

  private static void body(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        var rs = s.executeQuery("SELECT count(*) FROM report")) {
      rs.next();
    }
  }
}
