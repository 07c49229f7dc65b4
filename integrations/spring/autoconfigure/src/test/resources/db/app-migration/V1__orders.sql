-- An application's own first migration: the version fencekeeper's migration also has.
CREATE TABLE orders (id BIGINT PRIMARY KEY, total_cents BIGINT NOT NULL);
CREATE TABLE daily_report (report_day VARCHAR(10) PRIMARY KEY, body VARCHAR(200) NOT NULL);
