-- The example's tables. Run once before starting the instances (psql -f, or your migrations).
CREATE TABLE IF NOT EXISTS sales (
  id           BIGSERIAL PRIMARY KEY,
  sold_on      DATE NOT NULL,
  amount_cents BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS daily_sales_report (
  report_day   DATE PRIMARY KEY,
  sales        INTEGER NOT NULL,
  total_cents  BIGINT NOT NULL,
  generated_by VARCHAR(200) NOT NULL,
  token        BIGINT NOT NULL
);

-- fencekeeper-jdbc's guard rows (its db/fencekeeper/postgresql/V1__fencekeeper_fence.sql).
CREATE TABLE IF NOT EXISTS fencekeeper_fence (
  resource   VARCHAR(512) PRIMARY KEY,
  token      BIGINT NOT NULL,
  written_at TIMESTAMP WITH TIME ZONE NOT NULL
);
