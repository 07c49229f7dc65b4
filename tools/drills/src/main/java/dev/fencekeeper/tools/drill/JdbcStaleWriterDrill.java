package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.LeaseHeldException;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.jdbc.JdbcFence;
import dev.fencekeeper.jdbc.SqlWork;
import dev.fencekeeper.jdbc.StaleFenceTokenException;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;

/**
 * {@code drill stale-writer --jdbc-url}: the README's paused-worker timeline against the user's own
 * database. Worker A takes a lease and writes a report row through the fence, is paused past its
 * lease (it stops renewing and sleeps, as a frozen process would), B takes the lease and commits
 * its report, and A resumes and runs its transaction with the old token. PASS when the database
 * refused A's transaction, named B's token, and kept B's row. Creates two tables of its own (a
 * fence table and a report table, with a random suffix) and drops them afterwards.
 */
final class JdbcStaleWriterDrill {
  static final String RESOURCE = "daily-sales-report";
  private static final Duration TTL = Duration.ofSeconds(2);
  private static final Duration ACQUIRE_BOUND = Duration.ofSeconds(30);

  /** Outcome: the timeline as printed, and whether the fence held. */
  record Outcome(List<String> timeline, boolean passed, String verdict, long tokenA, long tokenB) {}

  private final DataSource db;
  private final ClusterConfig cluster;
  private final PrintStream progress;
  private final long startNanos = System.nanoTime();
  private final List<String> timeline = new ArrayList<>();
  private final String fenceTable;
  private final String reportTable;

  JdbcStaleWriterDrill(DataSource db, ClusterConfig cluster, PrintStream progress) {
    this.db = db;
    this.cluster = cluster;
    this.progress = progress;
    String suffix = Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36);
    this.fenceTable = "fencekeeper_drill_fence_" + suffix;
    this.reportTable = "fencekeeper_drill_report_" + suffix;
  }

  List<String> tables() {
    return List.of(fenceTable, reportTable);
  }

  Outcome run() throws Exception {
    JdbcFence fence = JdbcFence.builder(db).table(fenceTable).createTable(true).build();
    execute(
        "CREATE TABLE "
            + reportTable
            + " (day VARCHAR(32) PRIMARY KEY, body VARCHAR(200) NOT NULL,"
            + " token BIGINT NOT NULL)");
    try (FencingClient clientA = FencingClient.connect(cluster, "drill-worker-A");
        FencingClient clientB = FencingClient.connect(cluster, "drill-worker-B")) {
      line(
          "database "
              + productName()
              + "; fence table "
              + fenceTable
              + ", report table "
              + reportTable);
      Lease a = acquire(clientA);
      line(
          "T1  A acquires "
              + RESOURCE
              + ", token "
              + a.token()
              + " (TTL "
              + TTL.toMillis()
              + " ms)");
      fence.inTransaction(a, writeReport("A's draft", a.token()));
      line("T2  A writes its draft through the fence: committed");
      a.abandon();
      line("T3  A pauses (GC, stall, SIGSTOP): no renewals; lease.isValid() was true just before");
      Lease b = acquire(clientB);
      line("T4  B acquires " + RESOURCE + ", token " + b.token() + " (A's lease expired)");
      fence.inTransaction(b, writeReport("B's report", b.token()));
      line("T5  B writes its report with token " + b.token() + ": committed");
      String verdict;
      boolean passed;
      try {
        fence.inTransaction(a, writeReport("A's stale overwrite", a.token()));
        line(
            "T6  A resumes and writes with token "
                + a.token()
                + ": COMMITTED (the fence did not hold)");
        passed = false;
        verdict = "FAIL: the database accepted token " + a.token() + " after token " + b.token();
      } catch (StaleFenceTokenException e) {
        line(
            "T6  A resumes and writes with token "
                + a.token()
                + ": refused by the database, rolled back ("
                + e.getMessage()
                + ")");
        String kept = report();
        boolean bKept = ("B's report @" + b.token()).equals(kept);
        passed = e.newerToken() == b.token() && bKept;
        verdict =
            passed
                ? "PASS: the stale writer was refused inside its transaction; B's row is intact"
                : "FAIL: refused, but the database holds '"
                    + kept
                    + "' (newer token "
                    + e.newerToken()
                    + ")";
      }
      b.close();
      return new Outcome(List.copyOf(timeline), passed, verdict, a.token(), b.token());
    } finally {
      dropTables();
    }
  }

  private Lease acquire(FencingClient client) throws InterruptedException {
    long deadline = System.nanoTime() + ACQUIRE_BOUND.toNanos();
    while (true) {
      try {
        return client.acquire(RESOURCE, TTL, TTL.multipliedBy(3));
      } catch (LeaseHeldException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  private SqlWork<Void> writeReport(String body, long token) {
    return c -> {
      try (PreparedStatement update =
          c.prepareStatement(
              "UPDATE " + reportTable + " SET body = ?, token = ? WHERE day = '2026-11-29'")) {
        update.setString(1, body);
        update.setLong(2, token);
        if (update.executeUpdate() == 0) {
          try (PreparedStatement insert =
              c.prepareStatement(
                  "INSERT INTO "
                      + reportTable
                      + " (day, body, token) VALUES ('2026-11-29', ?, ?)")) {
            insert.setString(1, body);
            insert.setLong(2, token);
            insert.executeUpdate();
          }
        }
      }
      return null;
    };
  }

  private String report() throws SQLException {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT body, token FROM " + reportTable)) {
      return rs.next() ? rs.getString(1) + " @" + rs.getLong(2) : null;
    }
  }

  private String productName() throws SQLException {
    try (Connection c = db.getConnection()) {
      return c.getMetaData().getDatabaseProductName()
          + " "
          + c.getMetaData().getDatabaseProductVersion();
    }
  }

  private void execute(String sql) throws SQLException {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
      if (!c.getAutoCommit()) {
        c.commit();
      }
    }
  }

  private void dropTables() {
    for (String table : tables()) {
      try {
        execute("DROP TABLE IF EXISTS " + table);
      } catch (SQLException e) {
        progress.println("could not drop " + table + ": " + e.getMessage());
      }
    }
  }

  private void line(String text) {
    long ms = (System.nanoTime() - startNanos) / 1_000_000;
    String stamped = String.format(Locale.ROOT, "%6d ms  %s", ms, text);
    timeline.add(stamped);
    progress.println(stamped);
  }
}
