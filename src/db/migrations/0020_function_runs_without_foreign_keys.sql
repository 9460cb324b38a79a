-- Run records (C11.5) are written for every function run at every checkout step, in batches, and
-- each row's two foreign keys cost as much as the rest of its insert together: per row, a lookup
-- of its app and of its store and a KEY SHARE lock on both rows (on the store's row, which order
-- placement updates, shared by every concurrent batch: a MultiXact). Measured on 3,000 runs: 22 µs
-- of PostgreSQL CPU a run with the keys, 13 without (docs/decisions.md, "Run records without
-- foreign keys").
--
-- The keys guarded nothing the writer does not: the only writer (insertRuns,
-- src/functions/function-runs.repo.ts) takes app_id and store_id from the store's active functions
-- it has just read, and apps and stores are never deleted (so ON DELETE CASCADE never fired). The
-- inputs table (migration 0017) has no foreign key for the same reason. A future deletion of apps
-- or stores must delete their runs and inputs itself, as C9's erasure does.
ALTER TABLE function_runs DROP CONSTRAINT IF EXISTS function_runs_app_id_fkey;
ALTER TABLE function_runs DROP CONSTRAINT IF EXISTS function_runs_store_id_fkey;
