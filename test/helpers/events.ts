// The store's outbox as the tests read it (C8.1: a change and its events are written together).
import type { Harness } from './harness.js';

export interface EventRow {
  topic: string;
  payload: any;
}

/** The store's events, oldest first; with `topicPrefix`, only topics that start with it. */
export async function events(h: Harness, storeId: string, topicPrefix = ''): Promise<EventRow[]> {
  const { rows } = await h.db.query<EventRow>(
    `SELECT topic, payload FROM events WHERE store_id = $1 AND starts_with(topic, $2) ORDER BY created_at, id`,
    [storeId, topicPrefix],
  );
  return rows;
}

/** The events `work` wrote for the store, oldest first. */
export async function eventsOf(h: Harness, storeId: string, work: () => Promise<unknown>): Promise<EventRow[]> {
  const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE store_id = $1', [storeId]);
  await work();
  return (await events(h, storeId)).slice(rows[0].n);
}

/** The events written after `before` (an earlier `events` result). */
export async function newEvents(h: Harness, storeId: string, before: EventRow[]): Promise<EventRow[]> {
  return (await events(h, storeId)).slice(before.length);
}
