package dev.fencekeeper.jdbc;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.config.ClusterConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * One worker process of {@link ContentionPostgresTest}: a few threads that take leases on two
 * contended resources and run read-modify-write transactions on a counter row, each also appending
 * {@code (resource, token, value)} to an audit table. Announces on stdout each pause window it
 * enters (and then lingers there briefly) so the controller can SIGSTOP the whole process inside
 * it. Stops when stdin closes, or at its own time and iteration bounds.
 */
public final class ContentionWorker {
  static final String PREFIX = "FK-WORKER ";
  static final Duration TTL = Duration.ofMillis(1000);
  // A bound: the controller ends the run long before, also with the other variants' workers beside.
  private static final Duration MAX_RUN = Duration.ofSeconds(120);
  private static final int MAX_TRANSACTIONS_PER_THREAD = 5_000;
  private static final int RESOURCES = 2;

  /** How the worker fences its transaction; only {@link #GUARDED} is correct. */
  enum Variant {
    /** {@link JdbcFence#guard} in the transaction, before its writes. */
    GUARDED,
    /** No fence at all: the lease alone. */
    UNFENCED,
    /** The cluster's validate before the writes: check-then-act. */
    VALIDATE_THEN_WRITE
  }

  private final FencingClient client;
  private final JdbcFence fence;
  private final PGSimpleDataSource db;
  private final Variant variant;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicInteger committed = new AtomicInteger();
  private final AtomicInteger refused = new AtomicInteger();
  private final AtomicInteger failed = new AtomicInteger();

  private final String prefix;

  private ContentionWorker(
      FencingClient client, PGSimpleDataSource db, Variant variant, String prefix) {
    this.prefix = prefix;
    this.client = client;
    this.db = db;
    this.variant = variant;
    this.fence = JdbcFence.builder(db).client(client).build();
  }

  /** Args: cluster config file, JDBC URL, variant, threads, seed, resource name prefix. */
  public static void main(String[] args) throws Exception {
    ClusterConfig config = ClusterConfig.load(Path.of(args[0]));
    PGSimpleDataSource db = new PGSimpleDataSource();
    db.setURL(args[1]);
    Variant variant = Variant.valueOf(args[2]);
    int threads = Integer.parseInt(args[3]);
    long seed = Long.parseLong(args[4]);
    String prefix = args[5];
    try (FencingClient client =
        FencingClient.connect(config, "worker-" + ProcessHandle.current().pid())) {
      ContentionWorker worker = new ContentionWorker(client, db, variant, prefix);
      worker.run(threads, seed);
    }
    System.exit(0);
  }

  private void run(int threads, long seed) throws Exception {
    Thread stdinWatch =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                while (in.readLine() != null) {
                  // Any line or EOF ends the run; EOF also comes when the controller dies.
                  break;
                }
              } catch (Exception ignored) {
                // Treated as EOF.
              }
              stop.set(true);
            },
            "stdin-watch");
    stdinWatch.setDaemon(true);
    stdinWatch.start();
    long deadline = System.nanoTime() + MAX_RUN.toNanos();
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Random random = new Random(seed * 31 + i);
      Thread t = new Thread(() -> loop(random, deadline), "worker-" + i);
      workers.add(t);
    }
    say("READY");
    workers.forEach(Thread::start);
    for (Thread t : workers) {
      t.join();
    }
    say("DONE committed=" + committed + " refused=" + refused + " failed=" + failed);
  }

  private boolean running(long deadline) {
    return !stop.get() && System.nanoTime() < deadline;
  }

  private void loop(Random random, long deadline) {
    try (Connection c = db.getConnection()) {
      int transactions = 0;
      while (running(deadline) && transactions < MAX_TRANSACTIONS_PER_THREAD) {
        String resource = prefix + random.nextInt(RESOURCES);
        Lease lease;
        try {
          lease = client.acquire(resource, TTL, Duration.ofSeconds(2));
        } catch (RuntimeException e) {
          continue; // held past the wait, or an election: try again
        }
        try {
          for (int k = 0; k < 4 && running(deadline); k++) {
            transactions++;
            if (!transaction(c, lease, random)) {
              break;
            }
          }
        } finally {
          try {
            lease.close();
          } catch (RuntimeException ignored) {
            // Release is best effort: the lease ends by expiry otherwise.
          }
        }
      }
    } catch (SQLException e) {
      say("ERROR " + e);
      failed.incrementAndGet();
    }
  }

  /** One read-modify-write transaction; false when it did not commit. */
  private boolean transaction(Connection c, Lease lease, Random random) throws SQLException {
    String resource = lease.resource();
    long token = lease.token();
    String window = random.nextInt(5) == 0 ? (random.nextBoolean() ? "pre" : "post") : null;
    c.setAutoCommit(false);
    String txId = UUID.randomUUID().toString();
    try {
      if (variant == Variant.VALIDATE_THEN_WRITE) {
        Result check = client.validate(resource, token);
        // Only CURRENT is a success among validate's answers (STALE, EXPIRED, UNAVAILABLE are not).
        if (!check.isSuccess()) {
          c.rollback();
          refused.incrementAndGet();
          return false;
        }
      }
      if ("pre".equals(window)) {
        linger("pre");
      }
      Timestamp checkedAt = now(c);
      if (variant == Variant.GUARDED) {
        fence.guard(c, lease);
      }
      if ("post".equals(window)) {
        linger("post");
      }
      long value;
      try (PreparedStatement read =
          c.prepareStatement("SELECT value FROM counter WHERE resource = ?")) {
        read.setString(1, resource);
        try (ResultSet rs = read.executeQuery()) {
          rs.next();
          value = rs.getLong(1) + 1;
        }
      }
      try (PreparedStatement write =
          c.prepareStatement("UPDATE counter SET value = ? WHERE resource = ?")) {
        write.setLong(1, value);
        write.setString(2, resource);
        write.executeUpdate();
      }
      try (PreparedStatement audit =
          c.prepareStatement(
              "INSERT INTO audit (tx_id, resource, token, value, checked_at) VALUES (?, ?, ?,"
                  + " ?, ?)")) {
        audit.setString(1, txId);
        audit.setString(2, resource);
        audit.setLong(3, token);
        audit.setLong(4, value);
        audit.setTimestamp(5, checkedAt);
        audit.executeUpdate();
      }
      c.commit();
    } catch (StaleFenceTokenException e) {
      c.rollback();
      refused.incrementAndGet();
      return false;
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      failed.incrementAndGet();
      return false;
    } finally {
      c.setAutoCommit(true);
    }
    committed.incrementAndGet();
    // Noted after the commit returned: an upper bound on when it became visible.
    try (PreparedStatement note =
        c.prepareStatement(
            "INSERT INTO committed (tx_id, noted_at) VALUES (?, clock_timestamp())")) {
      note.setString(1, txId);
      note.executeUpdate();
    }
    return true;
  }

  /** The database's own clock, so every process's timestamps are comparable. */
  private static Timestamp now(Connection c) throws SQLException {
    try (PreparedStatement q = c.prepareStatement("SELECT clock_timestamp()");
        ResultSet rs = q.executeQuery()) {
      rs.next();
      return rs.getTimestamp(1);
    }
  }

  private static void linger(String window) {
    say("WINDOW " + window);
    try {
      Thread.sleep(300);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static synchronized void say(String line) {
    System.out.println(PREFIX + line);
    System.out.flush();
  }
}
