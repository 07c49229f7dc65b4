package dev.fencekeeper.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.Properties;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Tokens from a real three-node cluster, enforced by a real PostgreSQL. */
@Timeout(180)
class SeedScenarioPostgresTest {
  @TempDir Path clusterData;
  @TempDir Path restoredData;
  @TempDir Path scratch;

  private DataSource db;
  private JdbcFence fence;

  @BeforeEach
  void setUp() throws SQLException {
    db = Postgres.newDatabase();
    Postgres.execute(
        db,
        "CREATE TABLE daily_report (day TEXT PRIMARY KEY, body TEXT NOT NULL, token BIGINT NOT"
            + " NULL)");
    fence = JdbcFence.builder(db).createTable(true).build();
  }

  private static SqlWork<Void> writeReport(String body, long token) {
    return c -> {
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO daily_report VALUES ('2026-11-29', ?, ?) ON CONFLICT (day) DO UPDATE SET"
                  + " body = EXCLUDED.body, token = EXCLUDED.token")) {
        ps.setString(1, body);
        ps.setLong(2, token);
        ps.executeUpdate();
      }
      return null;
    };
  }

  private String report() throws SQLException {
    try (var c = db.getConnection();
        var s = c.createStatement();
        var rs = s.executeQuery("SELECT body || ' @' || token FROM daily_report")) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  // Guarantee (the README's T1–T6): A acquires and writes, pauses past its TTL, B acquires and
  // commits, A resumes and its transaction is rolled back with a stale refusal naming both tokens;
  // B's rows stay.
  @Test
  void pausedHolderIsRefusedByTheDatabase() throws Exception {
    try (TestCluster cluster = TestCluster.start(clusterData, new Properties())) {
      cluster.awaitLeader();
      FencingClient clientA = cluster.newClient("worker-a");
      FencingClient clientB = cluster.newClient("worker-b");

      Lease a = clientA.acquire("daily-sales-report", Duration.ofSeconds(1));
      fence.inTransaction(a, writeReport("A's first draft", a.token()));
      // A's pause: it stops renewing (as a frozen process would) and the lease runs out.
      a.abandon();
      Lease b =
          await()
              .atMost(Duration.ofSeconds(30))
              .pollInterval(Duration.ofMillis(100))
              .ignoreExceptions()
              .until(
                  () -> clientB.acquire("daily-sales-report", Duration.ofSeconds(30)),
                  l -> l != null);
      assertThat(b.token()).isGreaterThan(a.token());
      fence.inTransaction(b, writeReport("B's report", b.token()));

      // A wakes up: it still believes it holds the lease.
      assertThatThrownBy(
              () -> fence.inTransaction(a, writeReport("A's stale overwrite", a.token())))
          .isInstanceOfSatisfying(
              StaleFenceTokenException.class,
              e -> {
                assertThat(e.sentToken()).isEqualTo(a.token());
                assertThat(e.newerToken()).isEqualTo(b.token());
              });
      assertThat(report()).isEqualTo("B's report @" + b.token());
      // The holder itself writes again with the same token.
      fence.inTransaction(b, writeReport("B's second revision", b.token()));
      assertThat(report()).isEqualTo("B's second revision @" + b.token());
      b.close();
    }
  }

  // Guarantee: after fencekeeper is restored from a backup (its tokens jump above every old one)
  // the guard rows need no repair: the new holder writes, and tokens of the old cluster stay
  // refused.
  @Test
  void guardRowsStayValidAcrossARestoreFromBackup() throws Exception {
    Path backup = scratch.resolve("cluster.backup");
    long oldToken;
    try (TestCluster old = TestCluster.start(clusterData, new Properties())) {
      old.awaitLeader();
      FencingClient client = old.newClient("old");
      Lease early = client.acquire("daily-sales-report", Duration.ofSeconds(30));
      assertThat(client.backup(backup).isSuccess()).isTrue();
      // Tokens issued after the backup are not in it; the database has seen the newest of them.
      early.close();
      Lease late = client.acquire("daily-sales-report", Duration.ofMinutes(5));
      fence.inTransaction(late, writeReport("old cluster", late.token()));
      late.abandon();
      oldToken = late.token();
    }
    try (TestCluster restored = TestCluster.startRestored(restoredData, backup)) {
      restored.awaitLeader();
      FencingClient client = restored.newClient("new");
      Lease fresh =
          await()
              .atMost(Duration.ofSeconds(30))
              .pollInterval(Duration.ofMillis(200))
              .ignoreExceptions()
              .until(
                  () -> client.acquire("daily-sales-report", Duration.ofSeconds(30)),
                  l -> l != null);
      assertThat(fresh.token()).isGreaterThan(oldToken);
      fence.inTransaction(fresh, writeReport("restored cluster", fresh.token()));
      // A raw token is checked with the cluster the fence is bound to: the restored one.
      JdbcFence checked = JdbcFence.builder(db).client(client).build();
      assertThatThrownBy(
              () ->
                  checked.inTransaction(
                      "daily-sales-report", oldToken, writeReport("old", oldToken)))
          .isInstanceOf(StaleFenceTokenException.class);
      assertThat(fence.acceptedToken("daily-sales-report"))
          .isEqualTo(OptionalLong.of(fresh.token()));
      assertThat(report()).isEqualTo("restored cluster @" + fresh.token());
      fresh.close();
    }
  }
}
