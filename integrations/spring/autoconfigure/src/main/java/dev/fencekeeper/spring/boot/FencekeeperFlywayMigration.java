package dev.fencekeeper.spring.boot;

import dev.fencekeeper.jdbc.FenceDialect;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Creates the fence table with fencekeeper-jdbc's own migration ({@code
 * db/fencekeeper/<dialect>/V1__fencekeeper_fence.sql}) in a Flyway run of its own, whose history
 * table is not the application's: the application's {@code V1__} and fencekeeper's never meet.
 *
 * <p>Runs once every singleton exists, so after the application's own Flyway run (which would
 * otherwise find a schema that is not empty, and refuse it). The schema is not empty for this run
 * either, so it baselines at version 0 and then applies version 1.
 */
final class FencekeeperFlywayMigration implements SmartInitializingSingleton {
  private static final Logger LOG = LoggerFactory.getLogger(FencekeeperFlywayMigration.class);

  private final DataSource dataSource;
  private final String historyTable;

  FencekeeperFlywayMigration(DataSource dataSource, String historyTable) {
    this.dataSource = dataSource;
    this.historyTable = historyTable;
  }

  @Override
  public void afterSingletonsInstantiated() {
    String location = "classpath:db/fencekeeper/" + dialect().name().toLowerCase(Locale.ROOT);
    int applied =
        Flyway.configure(FencekeeperFlywayMigration.class.getClassLoader())
            .dataSource(dataSource)
            .table(historyTable)
            .locations(location)
            .baselineOnMigrate(true)
            .baselineVersion("0")
            .load()
            .migrate()
            .migrationsExecuted;
    LOG.info(
        "fencekeeper fence table migrated from {} ({} migration(s) applied, history in {})",
        location,
        applied,
        historyTable);
  }

  private FenceDialect dialect() {
    try (Connection connection = dataSource.getConnection()) {
      return FenceDialect.detect(connection.getMetaData());
    } catch (SQLException e) {
      throw new IllegalStateException(
          "fencekeeper: cannot migrate the fence table: " + e.getMessage(), e);
    }
  }
}
