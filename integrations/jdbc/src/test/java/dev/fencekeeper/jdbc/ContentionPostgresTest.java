package dev.fencekeeper.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.jdbc.ContentionWorker.Variant;
import dev.fencekeeper.testing.TestCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Many writers in several JVMs, short leases, and SIGSTOP pauses past the lease injected at the two
 * dangerous points of a transaction (before and after its fencing step). Checked afterwards from
 * the audit table: per resource, the committed tokens never decrease in commit order, and no
 * transaction committed whose token had been superseded in the database before its fencing step
 * began. The same run with the guard removed, or turned into the cluster's validate-then-write,
 * must be caught by the same checks.
 *
 * <p>The three variants run at the same time, each with a database, resources and workers of its
 * own: most of a run is waiting, on the workers' start and on the pauses.
 */
@Timeout(240)
@Execution(ExecutionMode.CONCURRENT)
class ContentionPostgresTest {
  private static final int PROCESSES = 3;
  private static final int THREADS_PER_PROCESS = 2;
  private static final int PAUSES = 4;
  private static final Duration PAUSE = ContentionWorker.TTL.multipliedBy(22).dividedBy(10);
  private static final Duration RUN_BOUND = Duration.ofSeconds(60);
  private static final Pattern DONE =
      Pattern.compile("DONE committed=(\\d+) refused=(\\d+) failed=(\\d+)");

  @TempDir static Path clusterDir;
  private static TestCluster cluster;
  @TempDir Path dir;
  private final BlockingQueue<String> reports = new LinkedBlockingQueue<>();

  record Event(Process process, String line) {}

  @BeforeAll
  static void startCluster() {
    cluster = TestCluster.start(clusterDir, new Properties());
    cluster.awaitLeader();
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  // Guarantee: with the guard statement, per resource the committed tokens never decrease in commit
  // order and no transaction commits after a newer token committed before its guard; without it (or
  // with validate before the write instead) the same checks find violations — so they would catch a
  // broken fence.
  @ParameterizedTest
  @EnumSource(Variant.class)
  void staleWritersNeverCommitThroughTheGuard(Variant variant) throws Exception {
    DataSource db = Postgres.newDatabase();
    JdbcFence.builder(db).build().createTable();
    Postgres.execute(
        db,
        "CREATE TABLE counter (resource TEXT PRIMARY KEY, value BIGINT NOT NULL)",
        "INSERT INTO counter VALUES ('"
            + variant.name().toLowerCase(Locale.ROOT)
            + "-0', 0), ('"
            + variant.name().toLowerCase(Locale.ROOT)
            + "-1', 0)",
        "CREATE TABLE audit (tx_id TEXT PRIMARY KEY, resource TEXT NOT NULL, token BIGINT NOT NULL,"
            + " value BIGINT NOT NULL, checked_at TIMESTAMP WITH TIME ZONE NOT NULL)",
        "CREATE TABLE committed (tx_id TEXT PRIMARY KEY, noted_at TIMESTAMP WITH TIME ZONE NOT"
            + " NULL)");

    List<Process> workers = new ArrayList<>();
    int[] totals = new int[3];
    int pausesDone;
    Path configFile = dir.resolve("cluster.properties");
    try (OutputStream out = Files.newOutputStream(configFile)) {
      cluster.config().toProperties().store(out, null);
    }
    BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    try {
      for (int i = 0; i < PROCESSES; i++) {
        workers.add(startWorker(configFile, Postgres.jdbcUrl(db), variant, i, events));
      }
      awaitReady(events, workers.size());
      pausesDone = injectPauses(events);
      for (Process p : workers) {
        p.getOutputStream().close(); // EOF on stdin: stop
      }
      int done = 0;
      long deadline = System.nanoTime() + RUN_BOUND.toNanos();
      while (done < workers.size() && System.nanoTime() < deadline) {
        String report = reports.poll(1, TimeUnit.SECONDS);
        if (report == null) {
          continue;
        }
        Matcher m = DONE.matcher(report);
        if (m.find()) {
          done++;
          for (int k = 0; k < 3; k++) {
            totals[k] += Integer.parseInt(m.group(k + 1));
          }
        }
      }
      assertThat(done).as("every worker reported before the bound").isEqualTo(workers.size());
    } finally {
      for (Process p : workers) {
        Signals.send("CONT", p);
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }

    List<String> violations = check(db);
    violations.stream().limit(3).forEach(v -> System.err.println(variant + " violation: " + v));
    assertThat(pausesDone).as("pauses injected").isEqualTo(PAUSES);
    assertThat(totals[0]).as("committed transactions").isGreaterThan(20);
    if (variant == Variant.GUARDED) {
      assertThat(violations).as("violations with the guard").isEmpty();
      assertThat(totals[1]).as("stale transactions refused by the guard").isPositive();
    } else {
      assertThat(violations)
          .as("the checks must catch the broken fence (" + variant + ")")
          .isNotEmpty();
    }
  }

  private Process startWorker(
      Path configFile, String url, Variant variant, int index, BlockingQueue<Event> events)
      throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(
            java,
            "-Xmx256m",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            System.getProperty("java.class.path"),
            ContentionWorker.class.getName(),
            configFile.toString(),
            url,
            variant.name(),
            String.valueOf(THREADS_PER_PROCESS),
            String.valueOf(index + 1),
            variant.name().toLowerCase(Locale.ROOT) + "-");
    Path logs = Path.of("target", "contention-logs");
    Files.createDirectories(logs);
    pb.redirectError(logs.resolve(variant + "-worker-" + index + ".err").toFile());
    Process p = pb.start();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                  int at = line.indexOf(ContentionWorker.PREFIX);
                  if (at >= 0) {
                    String said = line.substring(at + ContentionWorker.PREFIX.length());
                    if (said.startsWith("DONE") || said.startsWith("ERROR")) {
                      System.err.println(
                          "contention worker " + index + " (" + variant + "): " + said);
                    }
                    if (said.startsWith("DONE")) {
                      reports.add(said);
                    } else {
                      events.add(new Event(p, said));
                    }
                  }
                }
              } catch (IOException ignored) {
                // The process ended.
              }
            },
            "worker-" + index + "-stdout");
    reader.setDaemon(true);
    reader.start();
    return p;
  }

  private static void awaitReady(BlockingQueue<Event> events, int count)
      throws InterruptedException {
    int ready = 0;
    long deadline = System.nanoTime() + RUN_BOUND.toNanos();
    while (ready < count && System.nanoTime() < deadline) {
      Event e = events.poll(1, TimeUnit.SECONDS);
      if (e != null && e.line().equals("READY")) {
        ready++;
      }
    }
    assertThat(ready).as("workers ready").isEqualTo(count);
  }

  /**
   * Freezes a worker inside the windows it announces, alternating the window after the fencing step
   * (where check-then-act breaks) and the one before it (where a guard meets a newer token), each
   * pause longer than the lease, one pause at a time so the other processes take over meanwhile.
   */
  private static int injectPauses(BlockingQueue<Event> events) throws InterruptedException {
    int done = 0;
    long deadline = System.nanoTime() + RUN_BOUND.toNanos();
    while (done < PAUSES && System.nanoTime() < deadline) {
      Event e = events.poll(1, TimeUnit.SECONDS);
      String wanted = done % 2 == 0 ? "WINDOW post" : "WINDOW pre";
      if (e == null || !e.line().equals(wanted) || !e.process().isAlive()) {
        continue;
      }
      Signals.send("STOP", e.process());
      try {
        Thread.sleep(PAUSE.toMillis());
      } finally {
        Signals.send("CONT", e.process());
      }
      done++;
      // Let the resumed worker run into whatever waits for it before the next pause.
      Thread.sleep(700);
      events.removeIf(ev -> ev.line().startsWith("WINDOW"));
    }
    Thread.sleep(1000);
    return done;
  }

  /**
   * Both invariants, from the audit rows (committed transactions only) and their post-commit notes.
   */
  static List<String> check(DataSource db) throws SQLException {
    record Row(
        String txId,
        String resource,
        long token,
        long value,
        Timestamp checkedAt,
        Timestamp committedBy) {}
    Map<String, List<Row>> byResource = new HashMap<>();
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT a.tx_id, a.resource, a.token, a.value, a.checked_at, n.noted_at FROM audit"
                    + " a LEFT JOIN committed n ON n.tx_id = a.tx_id ORDER BY a.resource, a.value,"
                    + " a.tx_id")) {
      while (rs.next()) {
        Row row =
            new Row(
                rs.getString(1),
                rs.getString(2),
                rs.getLong(3),
                rs.getLong(4),
                rs.getTimestamp(5),
                rs.getTimestamp(6));
        byResource.computeIfAbsent(row.resource(), r -> new ArrayList<>()).add(row);
      }
    }
    List<String> violations = new ArrayList<>();
    byResource.forEach(
        (resource, rows) -> {
          // Each commit read the counter and wrote it plus one, so the value is the commit order —
          // if no two transactions overlapped. A repeated value is a lost update, itself a fence
          // failure.
          for (int i = 0; i < rows.size(); i++) {
            Row row = rows.get(i);
            if (row.value() != i + 1) {
              violations.add(
                  resource
                      + ": value "
                      + row.value()
                      + " at commit "
                      + (i + 1)
                      + " (lost update) "
                      + row);
            }
            if (i > 0 && row.token() < rows.get(i - 1).token()) {
              violations.add(
                  resource
                      + ": token decreased in commit order: "
                      + rows.get(i - 1)
                      + " then "
                      + row);
            }
          }
          for (Row row : rows) {
            for (Row newer : rows) {
              if (newer.token() > row.token()
                  && newer.committedBy() != null
                  && newer.committedBy().before(row.checkedAt())) {
                violations.add(
                    resource
                        + ": token "
                        + row.token()
                        + " committed although token "
                        + newer.token()
                        + " had committed before its fencing step began: "
                        + row
                        + " after "
                        + newer);
                break;
              }
            }
          }
        });
    return violations;
  }

  /** SIGSTOP / SIGCONT through kill(1): the JDK offers only TERM and KILL. */
  static final class Signals {
    private Signals() {}

    static void send(String signal, Process p) {
      try {
        new ProcessBuilder("kill", "-" + signal, String.valueOf(p.pid()))
            .inheritIO()
            .start()
            .waitFor(10, TimeUnit.SECONDS);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
