package com.example.reports;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.config.ClusterConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The README's "In Java" snippet as an application writes it: take the report's lease, write the report
 * with the lease's fencing token, release the lease.
 */
public final class DailySalesReport {
  private DailySalesReport() {}

  /**
   * Writes {@code reportBytes} under key {@code 2026-11-29} of {@code daily-sales-report} while holding
   * its lease; {@code path} is a fencekeeper properties file naming the cluster's peers.
   *
   * @return whether the write was accepted
   */
  public static boolean write(Path path, byte[] reportBytes) {
    try (FencingClient client = FencingClient.connect(ClusterConfig.load(path));
         Lease lease = client.acquire("daily-sales-report", Duration.ofSeconds(30))) {
      WriteResult r = lease.write("2026-11-29", reportBytes);   // carries lease.token()
      if (!r.isAccepted()) {   // not written: r.code() says why (STALE_TOKEN: someone newer owns it)
        return false;        // stop, do not retry blindly (or write with lease.write(...).orThrow())
      }
      return true;
    }
  }

  /** {@code java com.example.reports.DailySalesReport <cluster.properties>}. */
  public static void main(String[] args) {
    if (args.length != 1) {
      System.err.println("usage: DailySalesReport <cluster.properties>");
      System.exit(2);
    }
    boolean accepted = write(Path.of(args[0]), "totals".getBytes(StandardCharsets.UTF_8));
    System.out.println(accepted ? "report written" : "report refused");
    System.exit(accepted ? 0 : 1);
  }
}
