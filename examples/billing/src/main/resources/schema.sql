-- The service's own table. No unique key on invoice: a second charge of one invoice would be stored, as the
-- double charge it is. The guard table comes from fencekeeper-jdbc's db/fencekeeper/postgresql migration.
CREATE TABLE IF NOT EXISTS charge (
  invoice      TEXT   NOT NULL,
  amount_cents BIGINT NOT NULL,
  token        BIGINT NOT NULL,
  charged_at   TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);
