package dev.fencekeeper.examples.report;

import dev.fencekeeper.jdbc.JdbcFence;
import dev.fencekeeper.jdbc.StaleFenceTokenException;
import dev.fencekeeper.shedlock.LockToken;
import java.sql.Connection;
import java.sql.Date;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.ZoneOffset;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Yesterday's sales totals, once a day, by one instance of many. The lock alone is not enough: the
 * instance holding it can pause (GC, SIGSTOP) past {@code lockAtMostFor}, another takes over and
 * writes, and the first wakes up still inside this method. So the write goes through the JDBC fence
 * with the lock's token, and the database refuses it once a newer token has written.
 */
@Component
public class DailySalesReport {
  private static final Logger LOG = LoggerFactory.getLogger(DailySalesReport.class);

  private final DataSource dataSource;
  private final JdbcFence fence;
  private final ReportProperties properties;

  public DailySalesReport(DataSource dataSource, JdbcFence fence, ReportProperties properties) {
    this.dataSource = dataSource;
    this.fence = fence;
    this.properties = properties;
  }

  @Scheduled(cron = "${report.cron:0 5 0 * * *}", zone = "UTC")
  @SchedulerLock(name = "daily-sales-report", lockAtMostFor = "${report.lock-at-most-for:PT10M}")
  public void generate() throws SQLException, InterruptedException {
    // Read the token first, before any work: the pause can come at any later instruction.
    LockToken lock = LockToken.current();
    LocalDate day = LocalDate.now(ZoneOffset.UTC).minusDays(1);
    if (reportExists(day)) {
      return;
    }
    LOG.info(
        "EVENT computing token={} instance={} day={}", lock.token(), properties.instance(), day);
    Totals totals = computeTotals(day);
    try {
      fence.inTransaction(
          lock.resource(), lock.token(), conn -> writeReport(conn, day, totals, lock.token()));
      LOG.info(
          "EVENT wrote token={} instance={} day={} total={}",
          lock.token(),
          properties.instance(),
          day,
          totals.cents());
    } catch (StaleFenceTokenException e) {
      LOG.warn(
          "EVENT refused token={} newer={} instance={} day={}",
          e.sentToken(),
          e.newerToken(),
          properties.instance(),
          day);
    }
  }

  private boolean reportExists(LocalDate day) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT 1 FROM daily_sales_report WHERE report_day = ?")) {
      s.setDate(1, Date.valueOf(day));
      try (ResultSet rs = s.executeQuery()) {
        return rs.next();
      }
    }
  }

  private Totals computeTotals(LocalDate day) throws SQLException, InterruptedException {
    Thread.sleep(properties.computeTime().toMillis());
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT COUNT(*), COALESCE(SUM(amount_cents), 0) FROM sales WHERE sold_on = ?")) {
      s.setDate(1, Date.valueOf(day));
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return new Totals(rs.getInt(1), rs.getLong(2));
      }
    }
  }

  /** Inside the fenced transaction: the guard row has already accepted this token. */
  private int writeReport(Connection conn, LocalDate day, Totals totals, long token)
      throws SQLException {
    try (PreparedStatement s =
        conn.prepareStatement(
            "INSERT INTO daily_sales_report (report_day, sales, total_cents, generated_by, token)"
                + " VALUES (?, ?, ?, ?, ?) ON CONFLICT (report_day) DO UPDATE SET sales ="
                + " EXCLUDED.sales, total_cents = EXCLUDED.total_cents, generated_by ="
                + " EXCLUDED.generated_by, token = EXCLUDED.token")) {
      s.setDate(1, Date.valueOf(day));
      s.setInt(2, totals.sales());
      s.setLong(3, totals.cents());
      s.setString(4, properties.instance());
      s.setLong(5, token);
      return s.executeUpdate();
    }
  }

  private record Totals(int sales, long cents) {}
}
