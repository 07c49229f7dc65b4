package com.example.billing;

import static org.assertj.core.api.Assertions.assertThat;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The billing scenario: two worker JVMs, a real three-node cluster, a real PostgreSQL. Worker A takes the
 * batch and is frozen ({@code kill -STOP}) before it charges; its lease runs out; worker B takes the batch
 * the documented way. Whether B has charged already or not yet, A's charge after {@code kill -CONT} is
 * refused by the database and the invoice is charged once. Nothing calls {@code advance}.
 */
@Timeout(300)
class PausedWorkerTest {
  private static final Duration TTL = Duration.ofSeconds(2);

  private static LocalCluster cluster;
  private static EmbeddedPostgres postgres;
  private static String jdbcUrl;

  @BeforeAll
  static void start() throws Exception {
    // PostgreSQL starts while the cluster elects its leader.
    CompletableFuture<EmbeddedPostgres> database = CompletableFuture.supplyAsync(() -> {
      try {
        return EmbeddedPostgres.builder().start();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
    cluster = LocalCluster.start(
        Path.of(System.getProperty("fencekeeper.jar")), Path.of(System.getProperty("cluster.dir")));
    postgres = database.join();
    jdbcUrl = postgres.getJdbcUrl("postgres", "postgres");
    // The application's migrations: its own table, and the guard table fencekeeper-jdbc ships.
    migrate("schema.sql");
    migrate("db/fencekeeper/postgresql/V1__fencekeeper_fence.sql");
  }

  @AfterAll
  static void stop() throws Exception {
    if (postgres != null) {
      postgres.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  // Guarantee: B charges first; A, resumed, is refused; the invoice is charged once, by B.
  @Test
  void aPausedWorkerIsRefusedAfterTheNextOneCharged() throws Exception {
    try (Worker a = Worker.start("worker-a", cluster.nodeConfig(), jdbcUrl, "batch-1", TTL)) {
      long tokenA = a.acquired();
      a.signal("STOP");
      a.charge("inv-1"); // what A was about to do when it froze
      try (Worker b = Worker.start("worker-b", cluster.nodeConfig(), jdbcUrl, "batch-1", TTL)) {
        long tokenB = b.acquired(); // only once A's lease has run out
        assertThat(tokenB).isGreaterThan(tokenA);
        b.charge("inv-1");
        assertThat(b.nextStep()).isEqualTo("CHARGED inv-1 " + tokenB);

        a.signal("CONT");
        assertThat(a.nextStep()).startsWith("REFUSED inv-1").contains("STALE_TOKEN");
        assertThat(charges("inv-1")).containsExactly(tokenB);
      }
    }
  }

  // Guarantee: B holds the batch but has charged nothing; A, resumed, is refused all the same (the guard
  // row was raised when B acquired); B then charges; the invoice is charged once, by B.
  @Test
  void aPausedWorkerIsRefusedOnceTheNextOneHoldsTheBatchBeforeItCharges() throws Exception {
    try (Worker a = Worker.start("worker-a", cluster.nodeConfig(), jdbcUrl, "batch-2", TTL)) {
      long tokenA = a.acquired();
      a.signal("STOP");
      a.charge("inv-2");
      try (Worker b = Worker.start("worker-b", cluster.nodeConfig(), jdbcUrl, "batch-2", TTL)) {
        long tokenB = b.acquired();
        assertThat(tokenB).isGreaterThan(tokenA);
        assertThat(charges("inv-2")).describedAs("B has charged nothing yet").isEmpty();

        a.signal("CONT");
        assertThat(a.nextStep()).startsWith("REFUSED inv-2").contains("STALE_TOKEN");
        assertThat(charges("inv-2")).isEmpty();

        b.charge("inv-2");
        assertThat(b.nextStep()).isEqualTo("CHARGED inv-2 " + tokenB);
        assertThat(charges("inv-2")).containsExactly(tokenB);
      }
    }
  }

  /** The tokens of every charge of {@code invoice}, oldest first. */
  private static List<Long> charges(String invoice) throws SQLException {
    List<Long> tokens = new ArrayList<>();
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        PreparedStatement q = c.prepareStatement("SELECT token FROM charge WHERE invoice = ? ORDER BY charged_at")) {
      q.setString(1, invoice);
      try (ResultSet rs = q.executeQuery()) {
        while (rs.next()) {
          tokens.add(rs.getLong(1));
        }
      }
    }
    return tokens;
  }

  private static void migrate(String resource) throws IOException, SQLException {
    String sql;
    try (InputStream in = PausedWorkerTest.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("no " + resource + " on the class path");
      }
      sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
