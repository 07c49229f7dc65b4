package dev.fencekeeper.spring.boot;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.jdbc.JdbcFence;
import dev.fencekeeper.shedlock.FencekeeperLockProvider;
import dev.fencekeeper.testing.TestCluster;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * What fence at acquire adds to taking a ShedLock lock, measured in one run: a three-node cluster
 * and an embedded PostgreSQL on this host, lock-then-unlock rounds of a provider without and with
 * the acquire fence, alternating in pairs so both see the same load. The database is reached
 * through a HikariCP pool, as a Spring Boot application reaches it. Not a test: run it by hand
 * (docs/spring.md says how) and compare the two columns of the same run only.
 */
public final class FenceAtAcquireCost {
  private FenceAtAcquireCost() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    Path dir = Files.createTempDirectory("fence-at-acquire-cost");
    try (EmbeddedPostgres postgres = EmbeddedPostgres.builder().start();
        TestCluster cluster = TestCluster.start(dir)) {
      cluster.awaitLeader();
      HikariConfig pool = new HikariConfig();
      pool.setJdbcUrl(postgres.getJdbcUrl("postgres", "postgres"));
      pool.setMaximumPoolSize(2);
      try (HikariDataSource database = new HikariDataSource(pool);
          FencingClient client = cluster.newClient("cost")) {
        JdbcFence fence = JdbcFence.builder(database).client(client).createTable(true).build();
        FencekeeperLockProvider plain = FencekeeperLockProvider.builder(client).build();
        FencekeeperLockProvider fenced =
            FencekeeperLockProvider.builder(client)
                .acquireFence(lock -> fence.advance(lock.resource(), lock.token()))
                .build();
        // Warm-up: JIT, connections, the guard row.
        for (int i = 0; i < rounds / 4; i++) {
          lockOnce(plain, "cost-plain");
          lockOnce(fenced, "cost-fenced");
        }
        long[] plainNanos = new long[rounds];
        long[] fencedNanos = new long[rounds];
        for (int i = 0; i < rounds; i++) {
          plainNanos[i] = lockOnce(plain, "cost-plain");
          fencedNanos[i] = lockOnce(fenced, "cost-fenced");
        }
        report("without fence at acquire", plainNanos);
        report("with fence at acquire   ", fencedNanos);
        System.out.printf(
            "median ratio with/without: %.2f; median added: %.2f ms%n",
            median(fencedNanos) / median(plainNanos),
            (median(fencedNanos) - median(plainNanos)) / 1e6);
      }
    }
  }

  /** Nanoseconds from asking for the lock until the task could start; the unlock is not counted. */
  private static long lockOnce(FencekeeperLockProvider provider, String name) {
    long start = System.nanoTime();
    SimpleLock lock =
        provider
            .lock(new LockConfiguration(Instant.now(), name, Duration.ofSeconds(30), Duration.ZERO))
            .orElseThrow(() -> new IllegalStateException("not granted: " + name));
    long took = System.nanoTime() - start;
    lock.unlock();
    return took;
  }

  private static void report(String label, long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    System.out.printf(
        "%s: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms over %d locks%n",
        label,
        sorted[sorted.length / 2] / 1e6,
        sorted[sorted.length * 9 / 10] / 1e6,
        sorted[sorted.length * 99 / 100] / 1e6,
        sorted.length);
  }

  private static double median(long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}
