-- The application's own first migration (Flyway, at start-up). fencekeeper's fence table is not here:
-- the starter migrates it in a Flyway history of its own (fencekeeper_schema_history), so this V1 and
-- fencekeeper's V1 never meet.
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
