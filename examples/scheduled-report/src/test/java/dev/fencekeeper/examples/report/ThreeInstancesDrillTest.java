package dev.fencekeeper.examples.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.testing.TestCluster;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seeds' story as Java teams run it: three instances of the example application, each its own
 * JVM, share one fencekeeper cluster and one PostgreSQL. The instance that takes the report's lock
 * is SIGSTOPped while computing, past {@code lockAtMostFor}; another takes over and writes; the
 * first is resumed and writes late. The report table must hold exactly the newer instance's report,
 * and the late write must have been refused by the fence.
 */
@Timeout(240)
class ThreeInstancesDrillTest {
  private static final Pattern EVENT =
      Pattern.compile("EVENT (\\w+) token=(\\d+)(?: newer=(\\d+))? instance=(\\S+)");
  // The holder must be stopped inside its computation, and the next holder must finish its own well
  // inside lockAtMostFor; both margins are seconds wide for a loaded 2-core host.
  private static final Duration LOCK_AT_MOST_FOR = Duration.ofSeconds(7);
  private static final Duration COMPUTE_TIME = Duration.ofSeconds(4);

  @TempDir Path dataDir;
  EmbeddedPostgres postgres;
  TestCluster cluster;
  final List<Instance> instances = new ArrayList<>();
  final List<Event> events = new CopyOnWriteArrayList<>();

  record Event(String kind, long token, long newer, String instance) {}

  // Guarantee: a report job paused past lockAtMostFor cannot overwrite the report of the instance
  // that took over; its late write is refused by the fence, whatever order the three processes run
  // in.
  @Test
  void aPausedHolderIsFencedOutAndTheNewerReportStands() throws Exception {
    postgres = EmbeddedPostgres.builder().start();
    DataSource db = postgres.getPostgresDatabase();
    execute(db, resource("/db/schema.sql"));
    execute(
        db,
        "INSERT INTO sales (sold_on, amount_cents) VALUES (CURRENT_DATE - 1, 1250), (CURRENT_DATE -"
            + " 1, 4999), (CURRENT_DATE - 1, 751), (CURRENT_DATE, 100)");

    cluster = TestCluster.start(dataDir);
    cluster.awaitLeader();
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
    assertThat(late.newer()).isGreaterThan(paused).isLessThanOrEqualTo(newest);
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
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT token FROM fencekeeper_fence WHERE resource = 'daily-sales-report'")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getLong(1)).isEqualTo(newest);
    }
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
  void stopEverything() throws IOException {
    for (Instance i : instances) {
      i.stop();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (postgres != null) {
      postgres.close();
    }
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = ThreeInstancesDrillTest.class.getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
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

    static Instance start(String name, TestCluster cluster, int postgresPort, List<Event> events)
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
                  "--fencekeeper.peers=" + cluster.config().toProperties().getProperty("peers"),
                  "--fencekeeper.cluster-name=" + cluster.config().clusterName(),
                  "--spring.datasource.url=jdbc:postgresql://127.0.0.1:"
                      + postgresPort
                      + "/postgres",
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
