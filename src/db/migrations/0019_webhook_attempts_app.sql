-- The app of each webhook attempt (C8.6, the dashboard's stats panel: the p90 of the app's attempt
-- durations over the last 7 days). Attempts had no app column, so that query joined the window's
-- attempts of every app on the platform to this app's deliveries: its cost grew with the platform,
-- not the app (docs/decisions.md, "webhook_attempts has no app").
--
-- Nullable, as webhook_deliveries.app_id is: a store webhook made by the merchant (C6.5, source
-- `store`) belongs to no app, and neither do its attempts. Every other source has one
-- (subscription, manifest, gdpr and the developer's `test` deliveries). The value is always the
-- delivery's own app_id, which never changes after the delivery is created: the only writer
-- (recordAttempts, src/webhooks/deliveries.repo.ts) takes it from the delivery row it updates in
-- the same statement. So there is no foreign key here: the delivery's already guarantees the app,
-- and a second check would be one more lookup per recorded attempt.
ALTER TABLE webhook_attempts ADD COLUMN app_id uuid;

UPDATE webhook_attempts a SET app_id = d.app_id
  FROM webhook_deliveries d
 WHERE d.id = a.delivery_id AND d.app_id IS NOT NULL;

-- The stats query reads one app's attempts started since a moment, and only their durations:
-- an index-only range scan. Attempts of store webhooks (no app) are never read by app, so they are
-- left out of the index; `app_id = $1` implies the predicate, so the planner still uses it. The
-- primary key (delivery_id, attempt) stays: the delivery log reads attempts by delivery.
CREATE INDEX webhook_attempts_app_started_idx ON webhook_attempts (app_id, started_at) INCLUDE (duration_ms) WHERE app_id IS NOT NULL;
