package dev.fencekeeper.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A guard row only moves to tokens the cluster issued for its resource, and the documented way to
 * take a lease ({@link JdbcFence#acquire}) raises the row before the holder writes anything.
 */
@Timeout(120)
class ClusterIssuedTokensPostgresTest {
  @TempDir static Path clusterData;
  private static TestCluster cluster;
  private static FencingClient clientA;
  private static FencingClient clientB;

  private DataSource db;
  private JdbcFence fenceA;
  private JdbcFence fenceB;

  @BeforeAll
  static void startCluster() {
    cluster = TestCluster.start(clusterData, new Properties());
    cluster.awaitLeader();
    clientA = cluster.newClient("worker-a");
    clientB = cluster.newClient("worker-b");
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  @BeforeEach
  void setUp() throws SQLException {
    db = Postgres.newDatabase();
    Postgres.execute(db, "CREATE TABLE charge (invoice TEXT PRIMARY KEY, token BIGINT NOT NULL)");
    fenceA = JdbcFence.builder(db).client(clientA).createTable(true).build();
    fenceB = JdbcFence.builder(db).client(clientB).createTable(true).build();
  }

  private static SqlWork<Void> charge(String invoice, long token, AtomicBoolean ran) {
    return c -> {
      ran.set(true);
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO charge VALUES (?, ?)")) {
        ps.setString(1, invoice);
        ps.setLong(2, token);
        ps.executeUpdate();
      }
      return null;
    };
  }

  private long charges() throws SQLException {
    return Postgres.queryLong(db, "SELECT count(*) FROM charge");
  }

  // Guarantee: raw tokens the cluster never issued for the resource (Long.MAX_VALUE, a token issued
  // later to another resource, one issued earlier to another resource, a future one) are refused by
  // inTransaction, advance and guard alike; the guard row keeps the real holder's token, the work
  // never runs, and the real holder still commits.
  @Test
  void rawTokensTheClusterDidNotIssueForTheResourceAreRefused() throws Exception {
    Lease earlierOther = clientB.acquire("payroll", Duration.ofSeconds(30));
    Lease holder = fenceA.acquire("invoice-batch", Duration.ofSeconds(30));
    Lease laterOther = clientB.acquire("ledger", Duration.ofSeconds(30));
    try {
      long row = holder.token();
      assertThat(fenceA.acceptedToken("invoice-batch")).isEqualTo(OptionalLong.of(row));
      long[] forged = {
        Long.MAX_VALUE, laterOther.token(), earlierOther.token(), laterOther.token() + 1_000
      };
      for (long token : forged) {
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(
                () ->
                    fenceA.inTransaction("invoice-batch", token, charge("i-" + token, token, ran)))
            .as("inTransaction with token %d", token)
            .isInstanceOfAny(IllegalArgumentException.class, StaleFenceTokenException.class);
        assertThatThrownBy(() -> fenceA.advance("invoice-batch", token))
            .as("advance with token %d", token)
            .isInstanceOfAny(IllegalArgumentException.class, StaleFenceTokenException.class);
        try (Connection c = db.getConnection()) {
          c.setAutoCommit(false);
          assertThatThrownBy(() -> fenceA.guard(c, "invoice-batch", token))
              .as("guard with token %d", token)
              .isInstanceOfAny(IllegalArgumentException.class, StaleFenceTokenException.class);
          c.commit();
        }
        assertThat(ran).as("work run for token %d", token).isFalse();
        assertThat(fenceA.acceptedToken("invoice-batch")).isEqualTo(OptionalLong.of(row));
      }
      // The three tokens above the resource's newest are named as never issued.
      assertThatThrownBy(() -> fenceA.advance("invoice-batch", Long.MAX_VALUE))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("never issued")
          .hasMessageContaining("UNKNOWN_TOKEN");
      assertThat(charges()).isZero();

      fenceA.inTransaction(holder, charge("i-1", holder.token(), new AtomicBoolean()));
      // An issued raw token passes the check (the CLI's, a ShedLock lock's).
      fenceA.inTransaction(
          "invoice-batch", holder.token(), charge("i-2", holder.token(), new AtomicBoolean()));
      assertThat(charges()).isEqualTo(2);
    } finally {
      holder.close();
      earlierOther.close();
      laterOther.close();
    }
  }

  // Guarantee: a fence built without a client refuses every raw token (it cannot ask the cluster),
  // and the guard row is not created or moved; the Lease forms still run.
  @Test
  void withoutAClientRawTokensAreRefused() throws Exception {
    JdbcFence leaseOnly = JdbcFence.builder(db).createTable(true).build();
    try (Lease lease = clientA.acquire("no-client", Duration.ofSeconds(30))) {
      AtomicBoolean ran = new AtomicBoolean();
      assertThatThrownBy(
              () ->
                  leaseOnly.inTransaction(
                      "no-client", lease.token(), charge("x", lease.token(), ran)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(".client(client)");
      assertThatThrownBy(() -> leaseOnly.advance("no-client", Long.MAX_VALUE))
          .isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> leaseOnly.acquire("no-client-2", Duration.ofSeconds(5)))
          .isInstanceOf(IllegalStateException.class);
      assertThat(ran).isFalse();
      assertThat(leaseOnly.acceptedToken("no-client")).isEmpty();
      leaseOnly.inTransaction(lease, charge("y", lease.token(), ran));
      assertThat(leaseOnly.acceptedToken("no-client")).isEqualTo(OptionalLong.of(lease.token()));
    }
  }

  // Guarantee (issue 42's ordering): A takes the lease the documented way, pauses past its TTL; B
  // takes it the documented way and has not written; A resumes and its transaction is refused,
  // with no explicit advance anywhere.
  @Test
  void aPausedHolderIsRefusedOnceTheNextHolderAcquiredBeforeItWrites() throws Exception {
    Lease a = fenceA.acquire("invoice-batch", Duration.ofSeconds(1));
    // A's pause: it stops renewing, as a frozen process would, and the lease runs out.
    a.abandon();
    Lease b =
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(100))
            .ignoreExceptionsInstanceOf(dev.fencekeeper.client.LeaseHeldException.class)
            .until(() -> fenceB.acquire("invoice-batch", Duration.ofSeconds(30)), l -> l != null);
    try {
      assertThat(b.token()).isGreaterThan(a.token());
      AtomicBoolean ran = new AtomicBoolean();
      assertThatThrownBy(() -> fenceA.inTransaction(a, charge("i-1", a.token(), ran)))
          .isInstanceOfSatisfying(
              StaleFenceTokenException.class, e -> assertThat(e.newerToken()).isEqualTo(b.token()));
      assertThat(ran).isFalse();
      assertThat(charges()).isZero();
    } finally {
      b.close();
    }
  }
}
