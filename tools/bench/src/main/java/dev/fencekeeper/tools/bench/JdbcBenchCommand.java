package dev.fencekeeper.tools.bench;

import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.jdbc.FenceDialect;
import dev.fencekeeper.jdbc.JdbcFence;
import dev.fencekeeper.tools.CliContext;
import dev.fencekeeper.tools.DriverManagerDataSource;
import dev.fencekeeper.tools.ExitCode;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench jdbc}: what fencekeeper-jdbc's guard row costs a real database transaction. The same
 * single-row transaction (update one row, commit) runs unfenced and fenced (first JdbcFence's guard
 * statement, as {@code JdbcFence.inTransaction} runs it), in alternating rounds so both see the
 * same machine load; then every worker on one resource, fenced, to show how the guard row
 * serialises the writers of a resource.
 */
@Command(
    name = "jdbc",
    mixinStandardHelpOptions = true,
    header =
        "Measure the fence's cost per SQL transaction: fenced vs unfenced, and one contended"
            + " resource.",
    description = {
      "Creates its own tables in the database (dropped afterwards), then for each worker count runs"
          + " rounds of the unfenced and the fenced single-row transaction alternately and reports"
          + " throughput, mean latency and the fenced/unfenced cost per transaction; then all"
          + " workers fenced on one resource.",
      "Each worker holds one resource and one token for the whole run, as one lease holder would:"
          + " acquiring the lease is not on the transaction's path, so no cluster is needed for"
          + " this figure.",
      "Prints a Markdown table. Exit 0."
    })
final class JdbcBenchCommand implements Callable<Integer> {
  private final CliContext context;

  @Option(
      names = "--jdbc-url",
      paramLabel = "URL",
      required = true,
      description =
          "The database to measure (its driver must be on the class path; the jar has"
              + " PostgreSQL's).")
  private String jdbcUrl;

  @Option(names = "--user", paramLabel = "U", description = "Database user.")
  private String user;

  @Option(
      names = "--password-file",
      paramLabel = "F",
      description = "File whose first line is the password.")
  private Path passwordFile;

  @Option(
      names = "--concurrency",
      paramLabel = "N,N,...",
      defaultValue = "1,16",
      description = "Worker counts (default: ${DEFAULT-VALUE}).")
  private String concurrency;

  /** --duration and --warmup, as in {@code bench}. */
  @Mixin private MeasureWindow timing = new MeasureWindow();

  @Option(
      names = "--rounds",
      paramLabel = "N",
      defaultValue = "3",
      description =
          "Alternating unfenced/fenced rounds per worker count; --duration is split over them, and"
              + " --warmup loads both variants before the first (default: ${DEFAULT-VALUE}).")
  private int rounds;

  JdbcBenchCommand(CliContext context) {
    this.context = context;
  }

  /** One measured figure. */
  record Figure(
      String variant,
      int workers,
      long transactions,
      long failures,
      Duration elapsed,
      long totalNanos) {
    double perSecond() {
      return transactions / (elapsed.toNanos() / 1e9);
    }

    double meanMillis() {
      return transactions == 0 ? Double.NaN : totalNanos / 1e6 / transactions;
    }
  }

  private enum Variant {
    UNFENCED,
    FENCED,
    FENCED_ONE_RESOURCE
  }

  @Override
  public Integer call() throws Exception {
    List<Integer> sweep = new ArrayList<>();
    for (String part : concurrency.split(",")) {
      try {
        int n = Integer.parseInt(part.strip());
        if (n < 1 || n > 256) {
          throw new NumberFormatException();
        }
        sweep.add(n);
      } catch (NumberFormatException e) {
        throw new ConfigException("--concurrency: '" + part + "' must be a worker count 1..256");
      }
    }
    if (rounds < 1) {
      throw new ConfigException("--rounds: must be ≥ 1");
    }
    String password =
        passwordFile == null
            ? null
            : Files.readAllLines(passwordFile).stream().findFirst().orElse("");
    PrintStream progress = context.err();
    String suffix = Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36);
    String rowTable = "fencekeeper_bench_row_" + suffix;
    String fenceTable = "fencekeeper_bench_fence_" + suffix;
    DataSource db = new DriverManagerDataSource(jdbcUrl, user, password);
    int maxWorkers = sweep.stream().mapToInt(Integer::intValue).max().orElse(1);
    String product;
    try (Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      product =
          c.getMetaData().getDatabaseProductName()
              + " "
              + c.getMetaData().getDatabaseProductVersion();
      s.execute("CREATE TABLE " + rowTable + " (id INT PRIMARY KEY, value BIGINT NOT NULL)");
      for (int i = 0; i <= maxWorkers; i++) {
        s.execute("INSERT INTO " + rowTable + " VALUES (" + i + ", 0)");
      }
    } catch (SQLException e) {
      context
          .err()
          .println("fencekeeper bench jdbc: cannot prepare " + jdbcUrl + ": " + e.getMessage());
      return ExitCode.UNAVAILABLE.code();
    }
    JdbcFence fence = JdbcFence.builder(db).table(fenceTable).createTable(true).build();
    List<Figure[]> pairs = new ArrayList<>();
    Figure contended = null;
    Figure contendedUnfenced = null;
    try {
      fence.createTable();
      if (!timing.warmup.isZero()) {
        progress.println("warm-up " + timing.warmup.toSeconds() + " s");
        run(db, fence, rowTable, Variant.UNFENCED, maxWorkers, timing.warmup.dividedBy(2));
        run(db, fence, rowTable, Variant.FENCED, maxWorkers, timing.warmup.dividedBy(2));
      }
      Duration slice = timing.duration.dividedBy(rounds);
      for (int workers : sweep) {
        List<Figure> unfenced = new ArrayList<>();
        List<Figure> fenced = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
          unfenced.add(run(db, fence, rowTable, Variant.UNFENCED, workers, slice));
          fenced.add(run(db, fence, rowTable, Variant.FENCED, workers, slice));
          progress.println(
              String.format(
                  Locale.ROOT,
                  "%d workers, round %d: unfenced %.0f/s, fenced %.0f/s",
                  workers,
                  r + 1,
                  unfenced.get(r).perSecond(),
                  fenced.get(r).perSecond()));
        }
        pairs.add(new Figure[] {sum(unfenced), sum(fenced)});
      }
      contendedUnfenced =
          run(db, fence, rowTable, Variant.UNFENCED, -maxWorkers, timing.duration.dividedBy(2));
      contended =
          run(
              db,
              fence,
              rowTable,
              Variant.FENCED_ONE_RESOURCE,
              maxWorkers,
              timing.duration.dividedBy(2));
    } finally {
      try (Connection c = db.getConnection();
          Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS " + rowTable);
        s.execute("DROP TABLE IF EXISTS " + fenceTable);
      }
    }
    PrintStream out = context.out();
    out.println(
        "`fencekeeper bench jdbc` "
            + Instant.now()
            + " against "
            + product
            + " ("
            + Runtime.getRuntime().availableProcessors()
            + " CPUs seen by the bench JVM; "
            + rounds
            + " alternating rounds, "
            + timing.duration.toSeconds()
            + " s measured per variant and worker count)");
    out.println();
    out.println(
        "| workers | unfenced tx/s | fenced tx/s | unfenced mean ms | fenced mean ms | fenced cost"
            + " per tx |");
    out.println("|---:|---:|---:|---:|---:|---:|");
    for (Figure[] pair : pairs) {
      Figure u = pair[0];
      Figure f = pair[1];
      double overhead = (u.perSecond() / f.perSecond() - 1) * 100;
      out.println(
          String.format(
              Locale.ROOT,
              "| %d | %.0f | %.0f | %.2f | %.2f | %+.1f %% |",
              u.workers(),
              u.perSecond(),
              f.perSecond(),
              u.meanMillis(),
              f.meanMillis(),
              overhead));
    }
    out.println();
    out.println(
        String.format(
            Locale.ROOT,
            "One resource, %d workers: fenced %.0f tx/s (mean %.2f ms), the same"
                + " workers unfenced on one row %.0f tx/s (mean %.2f ms). Failed transactions: %d.",
            contended.workers(),
            contended.perSecond(),
            contended.meanMillis(),
            contendedUnfenced.perSecond(),
            contendedUnfenced.meanMillis(),
            pairs.stream().mapToLong(p -> p[0].failures() + p[1].failures()).sum()
                + contended.failures()
                + contendedUnfenced.failures()));
    return ExitCode.SUCCESS.code();
  }

  private static Figure sum(List<Figure> figures) {
    Figure first = figures.get(0);
    return new Figure(
        first.variant(),
        first.workers(),
        figures.stream().mapToLong(Figure::transactions).sum(),
        figures.stream().mapToLong(Figure::failures).sum(),
        figures.stream().map(Figure::elapsed).reduce(Duration.ZERO, Duration::plus),
        figures.stream().mapToLong(Figure::totalNanos).sum());
  }

  /**
   * Runs {@code workers} threads for {@code window}, each on its own connection. A negative worker
   * count means all of them on row 0 (the unfenced counterpart of one contended resource).
   */
  private static Figure run(
      DataSource db,
      JdbcFence fence,
      String rowTable,
      Variant variant,
      int workers,
      Duration window)
      throws Exception {
    boolean oneRow = workers < 0 || variant == Variant.FENCED_ONE_RESOURCE;
    int count = Math.abs(workers);
    LongAdder done = new LongAdder();
    LongAdder failed = new LongAdder();
    LongAdder nanos = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Exception> broken = new AtomicReference<>();
    CountDownLatch ready = new CountDownLatch(count);
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    String sql = "UPDATE " + rowTable + " SET value = value + 1 WHERE id = ?";
    for (int w = 0; w < count; w++) {
      int row = oneRow ? 0 : w + 1;
      String resource = oneRow ? "bench-one" : "bench-" + w;
      Thread t =
          new Thread(
              () -> {
                try (Connection c = db.getConnection();
                    PreparedStatement update = c.prepareStatement(sql);
                    // JdbcFence's own guard statement with a fixed token: a raw token would be
                    // checked with a cluster, which this figure leaves out (see the description).
                    PreparedStatement guard =
                        c.prepareStatement(
                            FenceDialect.detect(c.getMetaData()).guardStatement(fence.table()))) {
                  c.setAutoCommit(false);
                  update.setInt(1, row);
                  guard.setString(1, resource);
                  guard.setLong(2, 1);
                  ready.countDown();
                  go.await();
                  while (!stop.get()) {
                    long start = System.nanoTime();
                    try {
                      if (variant == Variant.UNFENCED) {
                        update.executeUpdate();
                      } else {
                        guard.executeUpdate();
                        update.executeUpdate();
                      }
                      c.commit();
                      nanos.add(System.nanoTime() - start);
                      done.increment();
                    } catch (SQLException e) {
                      c.rollback();
                      failed.increment();
                    }
                  }
                } catch (Exception e) {
                  broken.compareAndSet(null, e);
                  ready.countDown();
                }
              },
              "bench-jdbc-" + w);
      threads.add(t);
      t.start();
    }
    ready.await();
    long start = System.nanoTime();
    go.countDown();
    Thread.sleep(window.toMillis());
    stop.set(true);
    for (Thread t : threads) {
      t.join();
    }
    long elapsed = System.nanoTime() - start;
    if (broken.get() != null) {
      throw broken.get();
    }
    return new Figure(
        variant.name(), count, done.sum(), failed.sum(), Duration.ofNanos(elapsed), nanos.sum());
  }
}
