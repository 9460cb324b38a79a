-- A billing period is its start and its end (C10.2: one charge per installation and period). The
-- key was the start alone, so after a declined month the app's move to yearly pricing gave the
-- year [start, start + 1 year) the failed month's start: the billing job's claim (ON CONFLICT DO
-- NOTHING, src/billing/charges.ts) found it taken every day and the installation went unbilled for
-- a year; a declined year followed by monthly pricing lost its first month alike. The same period
-- is still attempted once; periods that overlap paid or pending time are kept out by the job.
-- The old constraint's name is PostgreSQL's default for 0005's UNIQUE (installation_id,
-- period_start), the same on PGlite; no IF EXISTS, so a database without it fails here loudly.
ALTER TABLE app_transactions
  DROP CONSTRAINT app_transactions_installation_id_period_start_key,
  ADD CONSTRAINT app_transactions_installation_period_key UNIQUE (installation_id, period_start, period_end);
