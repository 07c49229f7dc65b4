package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
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

/** {@code bench jdbc} against a real (embedded) PostgreSQL. */
@Timeout(180)
class JdbcBenchTest {
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

  // Guarantee: the bench measures both variants at each worker count and the contended resource,
  // prints the table docs/benchmarks.md quotes, counts no failed transaction, and drops its tables.
  @Test
  void benchJdbcReportsFencedAgainstUnfenced() throws Exception {
    var run =
        CliRun.run(
            dir,
            "bench",
            "jdbc",
            "--jdbc-url",
            "jdbc:postgresql://127.0.0.1:" + postgres.getPort() + "/postgres",
            "--user",
            "postgres",
            "--concurrency",
            "1,4",
            "--duration",
            "1s",
            "--rounds",
            "2",
            "--warmup",
            "0s");
    assertThat(run.exitCode()).as(run.toString()).isZero();
    assertThat(run.out())
        .contains("| workers | unfenced tx/s | fenced tx/s")
        .contains("| 1 | ")
        .contains("| 4 | ")
        .contains("One resource, 4 workers: fenced")
        .contains("Failed transactions: 0.");
    assertThat(tables()).noneMatch(t -> t.startsWith("fencekeeper_bench_"));
  }
}
