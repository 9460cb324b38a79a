-- The developer's logs filtered and counted (issue 15, the dashboard: "10,000 deliveries, 10,000
-- runs: paged, server time under 50 ms"; measured by `BENCH_ONLY=dashboard npm run bench`).
--
-- The only index of an app's deliveries was (app_id, created_at DESC, id DESC): a page filtered by
-- status, its count, and the 7-day counts by status of the deliveries page's stats panel read every
-- one of the app's rows from the heap (about four rows per page: each holds its request body), so
-- their cost grew with the app's whole history. Led by status, the same order follows: a filtered
-- page is read in order and stops after its rows, and the counts are index-only scans.
CREATE INDEX webhook_deliveries_app_status_idx ON webhook_deliveries (app_id, status, created_at DESC, id DESC);

-- The same for function runs filtered by function (and status), the dashboard's run filter and
-- GET .../functions/{handle}/logs (C11.6).
CREATE INDEX function_runs_app_handle_idx ON function_runs (app_id, function_handle, status, created_at DESC, id DESC);
