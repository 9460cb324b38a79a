// The transactional outbox (C8.1). A change and the events it causes are written in one
// transaction: call `emit(tx, ...)` with the transaction of the change. A committed change always
// has its events; a rolled-back one has none. The webhook worker turns events into deliveries.
import type { Queryable } from '../db/db.js';
import { uuidv7 } from '../ids.js';
import type { Topic } from '../webhooks/topics.js';

export const OUTBOX_CHANNEL = 'svc_outbox';

export interface EmittedEvent {
  id: string;
  storeId: string;
  topic: Topic;
  createdAt: Date;
}

export async function emit(tx: Queryable, event: { storeId: string; topic: Topic; payload: unknown; now: Date }): Promise<EmittedEvent> {
  const id = uuidv7(event.now.getTime());
  // With the notice that wakes the fan-out worker when the transaction commits (a poll covers a
  // missed wake-up): one statement, one round trip per event.
  await tx.query(
    `WITH added AS (INSERT INTO events (id, store_id, topic, payload, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id)
     SELECT pg_notify($6, id::text) FROM added`,
    [id, event.storeId, event.topic, JSON.stringify(event.payload), event.now, OUTBOX_CHANNEL],
    { name: 'outbox_emit' },
  );
  return { id, storeId: event.storeId, topic: event.topic, createdAt: event.now };
}
