package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code drill stale-writer --jdbc-url} against a real (embedded) PostgreSQL. */
@Timeout(180)
class JdbcVerbsTest {
  private static EmbeddedPostgres postgres;

  @TempDir Path dir;

  @BeforeAll
  static void startPostgres() throws Exception {
    postgres = EmbeddedPostgres.start();
  }

  @AfterAll
  static void stopPostgres() throws Exception {
    if (postgres != null) {
      postgres.close();
    }
  }

  private static List<String> tables() throws SQLException {
    List<String> names = new ArrayList<>();
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        ResultSet rs = c.getMetaData().getTables(null, "public", "%", new String[] {"TABLE"})) {
      while (rs.next()) {
        names.add(rs.getString("TABLE_NAME"));
      }
    }
    return names;
  }

  // Guarantee: the drill replays T1–T6 against the named database, the stale writer is refused
  // there, the verdict is PASS (exit 0), and the drill's own tables are gone afterwards.
  @Test
  void printsPassAgainstPostgres() throws Exception {
    Path password = dir.resolve("pg-password");
    Files.writeString(password, "unused-by-trust-auth\n");
    try (var cluster = InProcessCluster.start(dir.resolve("cluster"))) {
      var run =
          CliRun.run(
              dir,
              "drill",
              "stale-writer",
              "--endpoints",
              cluster.endpoints(),
              "--jdbc-url",
              "jdbc:postgresql://127.0.0.1:" + postgres.getPort() + "/postgres",
              "--user",
              "postgres",
              "--password-file",
              password.toString());
      assertThat(run.exitCode()).as(run.toString()).isZero();
      assertThat(run.out())
          .contains("T1  A acquires")
          .contains("T5  B writes")
          .contains("T6  A resumes")
          .contains("refused by the database")
          .contains("verdict: PASS");
    }
    assertThat(tables()).noneMatch(t -> t.startsWith("fencekeeper_drill_"));
  }

  // Guarantee: a database that cannot be reached is reported as such (exit 11), not as a verdict.
  @Test
  void anUnreachableDatabaseIsNotAVerdict() {
    var run =
        CliRun.run(
            dir,
            "drill",
            "stale-writer",
            "--peers",
            "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3",
            "--jdbc-url",
            "jdbc:postgresql://127.0.0.1:1/none",
            "--user",
            "postgres");
    assertThat(run.exitCode()).as(run.toString()).isEqualTo(11);
    assertThat(run.err()).contains("cannot connect");
    assertThat(run.out()).doesNotContain("PASS");
  }
}
