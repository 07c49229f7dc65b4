package dev.fencekeeper.examples.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The seeds' story as Java teams run it: three instances of the example application, each its own
 * JVM, share one fencekeeper cluster and one PostgreSQL. The instance that takes the report's lock
 * is SIGSTOPped while computing, past {@code lockAtMostFor}; another takes over and writes; the
 * first is resumed and writes late. The report table must hold exactly the newer instance's report,
 * and the late write must have been refused by the fence.
 *
 * <p>The build runs this on Spring Boot 4.0 and on 3.5 (examples/consumer-builds).
 */
@Timeout(480)
class ThreeInstancesDrillTest {
  private static final Pattern EVENT =
      Pattern.compile("EVENT (\\w+) token=(\\d+)(?: newer=(\\d+))? instance=(\\S+)");
  // The holder must be stopped inside its computation, and the next holder must finish its own well
  // inside lockAtMostFor; both margins are seconds wide for a loaded 2-core host.
  private static final Duration LOCK_AT_MOST_FOR = Duration.ofSeconds(7);
  private static final Duration COMPUTE_TIME = Duration.ofSeconds(4);

  static EmbeddedPostgres postgres;
  static LocalCluster cluster;
  final List<Instance> instances = new ArrayList<>();
  final List<Event> events = new CopyOnWriteArrayList<>();

  record Event(String kind, long token, long newer, String instance) {}

  @BeforeAll
  static void startClusterAndDatabase() throws Exception {
    startClusterAndDatabaseOnce();
  }

  /**
   * One cluster and one PostgreSQL server for every test class of this build (they run in one
   * JVM), stopped when it exits.
   */
  static synchronized void startClusterAndDatabaseOnce() throws Exception {
    if (cluster != null) {
      return;
    }
    postgres = EmbeddedPostgres.builder().start();
    cluster =
        LocalCluster.start(
            Path.of(System.getProperty("fencekeeper.jar")),
            Path.of(System.getProperty("cluster.dir")));
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    cluster.close();
                    postgres.close();
                  } catch (Exception ignored) {
                    // the JVM is exiting
                  }
                },
                "stop-cluster-and-database"));
  }

  /** A new, empty database on the shared server. */
  static DataSource newDatabase(String name) throws SQLException {
    execute(postgres.getPostgresDatabase(), "CREATE DATABASE " + name);
    return postgres.getDatabase("postgres", name);
  }

  // Guarantee: a report job paused past lockAtMostFor cannot overwrite the report of the instance
  // that took over; its late write is refused by the fence, whatever order the three processes run
  // in.
  @Test
  void aPausedHolderIsFencedOutAndTheNewerReportStands() throws Exception {
    DataSource db = newDatabase("drill");
    // The application's own migration first, so the sales are there before any instance runs.
    Flyway.configure().dataSource(db).locations("classpath:db/migration").load().migrate();
    execute(
        db,
        "INSERT INTO sales (sold_on, amount_cents) VALUES (CURRENT_DATE - 1, 1250), (CURRENT_DATE -"
            + " 1, 4999), (CURRENT_DATE - 1, 751), (CURRENT_DATE, 100)");
    for (String name : List.of("i1", "i2", "i3")) {
      instances.add(Instance.start(name, cluster, postgres.getPort(), events));
    }

    Event computing =
        await()
            .atMost(Duration.ofSeconds(120))
            .pollInterval(Duration.ofMillis(10))
            .until(() -> first("computing"), Optional::isPresent)
            .orElseThrow();
    Instance holder = instance(computing.instance());
    holder.signal("STOP");
    long paused = computing.token();

    // lockAtMostFor passes on the cluster; another instance's next run takes the lock and writes.
    Event newer =
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> last("wrote").filter(e -> e.token() > paused), Optional::isPresent)
            .orElseThrow();
    assertThat(newer.instance()).isNotEqualTo(holder.name);

    holder.signal("CONT");
    Event late =
        await()
            .atMost(Duration.ofSeconds(60))
            .until(
                () ->
                    events.stream()
                        .filter(
                            e ->
                                e.instance().equals(holder.name)
                                    && e.token() == paused
                                    && !e.kind().equals("computing"))
                        .findFirst(),
                Optional::isPresent)
            .orElseThrow();

    assertThat(late.kind()).describedAs("the paused instance's late write").isEqualTo("refused");
    long newest = last("wrote").orElseThrow().token();
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT report_day, sales, total_cents, generated_by, token,"
                    + " report_day = CURRENT_DATE - 1 FROM daily_sales_report")) {
      assertThat(rs.next()).describedAs("a report was written").isTrue();
      assertThat(rs.getInt("sales")).isEqualTo(3);
      assertThat(rs.getLong("total_cents")).isEqualTo(7000);
      assertThat(rs.getString("generated_by"))
          .isEqualTo(last("wrote").orElseThrow().instance())
          .isNotEqualTo(holder.name);
      assertThat(rs.getLong("token")).isEqualTo(newest);
      assertThat(rs.next()).describedAs("exactly one report").isFalse();
    }
    // The instances go on running the job every second: each run takes the lock, which raises the
    // fence to its token, finds the report there and returns. So the fence may be past the newest
    // writer's token by now (and may have been when the late write was refused), but never behind
    // it, and never past the newest token the cluster issued for the resource.
    long fence;
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT token FROM fencekeeper_fence WHERE resource = 'daily-sales-report'")) {
      assertThat(rs.next()).isTrue();
      fence = rs.getLong(1);
    }
    long issued;
    try (FencingClient client = FencingClient.builder().endpoints(cluster.peers()).build()) {
      issued = client.lease("daily-sales-report").currentToken();
    }
    assertThat(late.newer()).isGreaterThan(paused).isLessThanOrEqualTo(fence);
    assertThat(fence).isGreaterThanOrEqualTo(newest).isLessThanOrEqualTo(issued);
  }

  private Optional<Event> first(String kind) {
    return events.stream().filter(e -> e.kind().equals(kind)).findFirst();
  }

  private Optional<Event> last(String kind) {
    Event found = null;
    for (Event e : events) {
      if (e.kind().equals(kind)) {
        found = e;
      }
    }
    return Optional.ofNullable(found);
  }

  private Instance instance(String name) {
    return instances.stream().filter(i -> i.name.equals(name)).findFirst().orElseThrow();
  }

  @AfterEach
  void stopInstances() {
    for (Instance i : instances) {
      i.stop();
    }
  }

  private static void execute(DataSource db, String sql) throws SQLException {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /** One instance of the example application in its own JVM, on this test's class path. */
  static final class Instance {
    final String name;
    final Process process;

    private Instance(String name, Process process) {
      this.name = name;
      this.process = process;
    }

    static Instance start(String name, LocalCluster cluster, int postgresPort, List<Event> events)
        throws IOException {
      List<String> command =
          new ArrayList<>(
              List.of(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-Xmx256m",
                  "-XX:+UseSerialGC",
                  "-XX:TieredStopAtLevel=1",
                  "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2",
                  "-cp",
                  System.getProperty("java.class.path"),
                  ScheduledReportApplication.class.getName(),
                  "--spring.main.banner-mode=off",
                  "--fencekeeper.endpoints=" + cluster.peers(),
                  "--spring.datasource.url=jdbc:postgresql://127.0.0.1:"
                      + postgresPort
                      + "/drill",
                  "--spring.datasource.username=postgres",
                  "--spring.datasource.hikari.maximum-pool-size=2",
                  "--report.instance=" + name,
                  "--report.cron=* * * * * *",
                  "--report.lock-at-most-for=" + LOCK_AT_MOST_FOR,
                  "--report.compute-time=" + COMPUTE_TIME));
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      Thread reader =
          new Thread(
              () -> {
                try (BufferedReader out =
                    new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                  for (String line; (line = out.readLine()) != null; ) {
                    System.out.println("[" + name + "] " + line);
                    Matcher m = EVENT.matcher(line);
                    if (m.find()) {
                      events.add(
                          new Event(
                              m.group(1),
                              Long.parseLong(m.group(2)),
                              m.group(3) == null ? 0 : Long.parseLong(m.group(3)),
                              m.group(4)));
                    }
                  }
                } catch (IOException ignored) {
                  // the process ended
                }
              },
              "instance-" + name + "-output");
      reader.setDaemon(true);
      reader.start();
      return new Instance(name, process);
    }

    void signal(String signal) throws IOException, InterruptedException {
      Process kill =
          new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
              .inheritIO()
              .start();
      assertThat(kill.waitFor()).describedAs("kill -%s %s", signal, name).isZero();
      if (signal.equals("STOP")) {
        // A STOP takes effect on each thread on its own: what the test observes next must find the
        // whole JVM frozen.
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(10))
            .until(this::allThreadsStopped);
      }
    }

    /** Whether /proc shows every thread of the instance's JVM stopped (true where there is none). */
    private boolean allThreadsStopped() throws IOException {
      Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
      if (!Files.isDirectory(Path.of("/proc/self/task"))) {
        return true;
      }
      try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
        for (Path thread : threads) {
          String stat;
          try {
            stat = Files.readString(thread.resolve("stat"));
          } catch (NoSuchFileException ended) {
            continue;
          }
          char state = stat.charAt(stat.lastIndexOf(')') + 2);
          if (state != 'T' && state != 't') {
            return false;
          }
        }
      }
      return true;
    }

    void stop() {
      if (!process.isAlive()) {
        return;
      }
      try {
        signal("CONT"); // a stopped JVM cannot run its shutdown
      } catch (IOException | InterruptedException | AssertionError ignored) {
        // it may have exited meanwhile
      }
      process.destroy();
      try {
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }
  }
}
