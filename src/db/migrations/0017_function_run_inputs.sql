-- C11.5: a target's input is stored once for its runs (issue 13's bench: three delivery functions
-- per rate request wrote the same ~2 KB input three times, as jsonb and again as WAL).
--
-- The functions of one target at one checkout step all run on the same input (src/checkout/
-- checkout-functions.ts), so their records point at one row here. Runs written before this
-- migration keep their input inline (`function_runs.input`); readers take
-- coalesce(function_runs.input, function_run_inputs.input).
--
-- An input row shares `created_at` with all its runs (src/functions/function-runs.repo.ts writes
-- them in one statement, grouped by moment), so an input goes only with its last run: retention
-- deletes whole moments, and the erasure looks an input's other runs up by (created_at, input_id)
-- through function_runs_age_idx (docs/decisions.md, Functions).
--
-- There is deliberately no foreign key from function_runs.input_id: the check would be one more
-- lookup per inserted run, and deleting an input would have to search function_runs for
-- references (one more index per run). The only writer and the deleters keep it exact instead.
CREATE TABLE function_run_inputs (
  id uuid PRIMARY KEY,
  created_at timestamptz NOT NULL,
  -- the input with the checkout's token taken out (as function_runs.input, migration 0012)
  input jsonb NOT NULL
);

ALTER TABLE function_runs ADD COLUMN input_id uuid;
