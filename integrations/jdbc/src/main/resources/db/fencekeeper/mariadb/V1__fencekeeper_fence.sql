-- fencekeeper-jdbc guard rows (MariaDB 10.x, InnoDB). One row per fenced resource: the newest fencing token
-- this database has accepted for it, and when. Plain SQL for Flyway, Liquibase (sqlFile) or the mariadb client.
CREATE TABLE IF NOT EXISTS fencekeeper_fence (
  resource   VARCHAR(512) PRIMARY KEY,
  token      BIGINT NOT NULL,
  written_at DATETIME(6) NOT NULL
) ENGINE=InnoDB;
