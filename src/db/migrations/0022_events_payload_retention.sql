-- C8.10 and C9: an event's payload is the body its deliveries were sent with (customers' emails
-- and addresses among them). Deliveries lose their bodies after SVC_DELIVERY_RETENTION_DAYS, but the
-- event kept its payload for ever, out of reach of retention. The retention job now empties it too
-- (payload = JSON null) once the event has been fanned out, in batches found through this index of
-- the events that still hold one.
CREATE INDEX events_payload_kept_idx ON events (created_at) WHERE fanned_out_at IS NOT NULL AND payload <> 'null'::jsonb;
