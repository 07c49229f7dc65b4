package com.example.billing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.jdbc.JdbcFence;
import dev.fencekeeper.jdbc.StaleFenceTokenException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;

/**
 * One billing worker: takes the batch's lease the way the README says ({@link JdbcFence#acquire}, which
 * raises the database's guard row before it returns), then charges each invoice named on a line of standard
 * input in a transaction fenced with the lease's token, until {@code quit} or end of input.
 *
 * <p>It prints one line per step, which the test reads: {@code ACQUIRED <token>}, {@code CHARGED <invoice>
 * <token>}, {@code REFUSED <invoice> <reason>}.
 *
 * <p>Arguments: a node's properties file (it names every peer), the JDBC URL, the worker's name, the
 * batch's resource name, the lease's TTL (ISO-8601, {@code PT2S}).
 */
public final class BillingWorker {
  private static final Duration WAIT_FOR_BATCH = Duration.ofSeconds(60);

  private BillingWorker() {}

  public static void main(String[] args) throws Exception {
    ClusterConfig cluster = ClusterConfig.load(Path.of(args[0]));
    HikariConfig pool = new HikariConfig();
    pool.setJdbcUrl(args[1]);
    pool.setMaximumPoolSize(2);
    String worker = args[2];
    String batch = args[3];
    Duration ttl = Duration.parse(args[4]);

    try (FencingClient client = FencingClient.connect(cluster, worker);
        HikariDataSource dataSource = new HikariDataSource(pool)) {
      JdbcFence fence = JdbcFence.builder(dataSource).client(client).build();
      // Waits in line while another worker holds the batch; raises the guard row before it returns.
      try (Lease lease = fence.acquire(batch, ttl, WAIT_FOR_BATCH)) {
        say("ACQUIRED " + lease.token());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String invoice; (invoice = in.readLine()) != null && !invoice.equals("quit"); ) {
          try {
            String charged = invoice;
            fence.inTransaction(lease, connection -> charge(connection, charged, lease.token()));
            say("CHARGED " + invoice + " " + lease.token());
          } catch (StaleFenceTokenException e) {
            // A newer worker holds the batch: this one was paused past its lease. Nothing was charged.
            say("REFUSED " + invoice + " " + e.getMessage());
          }
        }
      }
    }
  }

  /** The service's own work: one charge row per invoice. Fenced by the caller's transaction. */
  static Void charge(Connection connection, String invoice, long token) throws SQLException {
    try (PreparedStatement insert =
        connection.prepareStatement("INSERT INTO charge (invoice, amount_cents, token) VALUES (?, 1999, ?)")) {
      insert.setString(1, invoice);
      insert.setLong(2, token);
      insert.executeUpdate();
    }
    return null;
  }

  private static void say(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
