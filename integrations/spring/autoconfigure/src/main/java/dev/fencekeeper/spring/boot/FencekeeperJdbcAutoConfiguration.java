package dev.fencekeeper.spring.boot;

import dev.fencekeeper.jdbc.JdbcFence;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * A {@link JdbcFence} on the application's {@link DataSource}, for jobs to guard their transactions
 * with their lease's token. Needs no cluster connection of its own: the token comes from the lock.
 */
@AutoConfiguration(
    after = FencekeeperAutoConfiguration.class,
    // Where DataSourceAutoConfiguration lives on Spring Boot 4 and on Spring Boot 3.
    afterName = {
      "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration"
    })
@ConditionalOnClass({JdbcFence.class, DataSource.class})
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnProperty(prefix = "fencekeeper.jdbc", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(FencekeeperProperties.class)
public class FencekeeperJdbcAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public JdbcFence jdbcFence(DataSource dataSource, FencekeeperProperties properties) {
    FencekeeperProperties.Jdbc settings = properties.getJdbc();
    return JdbcFence.builder(dataSource)
        .table(settings.getTable())
        .createTable(settings.isCreateTable())
        .build();
  }
}
