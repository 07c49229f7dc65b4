-- fencekeeper-jdbc guard rows (PostgreSQL). One row per fenced resource: the newest fencing token this
-- database has accepted for it, and when. Plain SQL for Flyway, Liquibase (sqlFile) or psql.
CREATE TABLE IF NOT EXISTS fencekeeper_fence (
  resource   VARCHAR(512) PRIMARY KEY,
  token      BIGINT NOT NULL,
  written_at TIMESTAMP WITH TIME ZONE NOT NULL
);
