// The test clock's offset (C12.1) is kept in the database, so a restart keeps the advanced time and
// every process of a deployment reads the same offset.
import type { Db } from '../db/db.js';
import type { TestClock } from '../clock.js';

export async function loadClockOffset(db: Db, clock: TestClock): Promise<void> {
  const { rows } = await db.query<{ value: number }>('SELECT value FROM platform_settings WHERE key = $1', [clock.storageKey]);
  if (rows[0]) clock.setOffset(Math.max(clock.offset, Number(rows[0].value)));
}

/** Advance atomically in the database, then adopt the stored offset. */
export async function advanceClock(db: Db, clock: TestClock, seconds: number): Promise<void> {
  const ms = Math.round(seconds * 1000);
  const { rows } = await db.query<{ value: number }>(
    `INSERT INTO platform_settings (key, value) VALUES ($1, to_jsonb($2::bigint))
     ON CONFLICT (key) DO UPDATE SET value = to_jsonb((platform_settings.value)::text::bigint + $2::bigint)
     RETURNING value`,
    [clock.storageKey, ms],
  );
  clock.setOffset(Number(rows[0].value));
}
