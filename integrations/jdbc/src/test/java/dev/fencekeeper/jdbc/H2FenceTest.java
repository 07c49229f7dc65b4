package dev.fencekeeper.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The same guard-row contract on H2 2.x (in memory), whose dialect is a guarded MERGE. */
@Timeout(60)
class H2FenceTest extends GuardRowContract {

  @Override
  DataSource newDatabase() {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=20000");
    return h2;
  }

  @Override
  String createNoteTable() {
    return "CREATE TABLE note (id INT PRIMARY KEY, token BIGINT)";
  }

  @Override
  String migrationFolder() {
    return "h2";
  }

  // Guarantee: an older token waiting on the newer holder's guard-row lock is refused once the
  // newer commits.
  @Test
  void olderTokenWaitingBehindNewerIsRefused() throws Exception {
    fence.inTransaction("r", 40, c -> null);
    ExecutorService second = Executors.newSingleThreadExecutor();
    try (Connection newer = db.getConnection()) {
      newer.setAutoCommit(false);
      fence.guard(newer, "r", 42);
      note(1, 42).run(newer);
      Future<Void> older = second.submit(() -> fence.inTransaction("r", 41, note(2, 41)));
      assertThatThrownBy(() -> older.get(700, TimeUnit.MILLISECONDS))
          .isInstanceOf(TimeoutException.class);
      newer.commit();
      assertThatThrownBy(() -> older.get(30, TimeUnit.SECONDS))
          .hasCauseInstanceOf(StaleFenceTokenException.class);
    } finally {
      second.shutdownNow();
    }
    assertThat(notes()).isEqualTo(1);
    assertThat(fence.acceptedToken("r")).isEqualTo(OptionalLong.of(42));
  }
}
