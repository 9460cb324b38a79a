// The test clock's offset (C12.1) is kept in the database, so a restart keeps the advanced time and
// every process of a deployment reads the same offset.
import type { Db } from '../db/db.js';
import type { TestClock } from '../clock.js';

/**
 * The furthest the test clock may run ahead: 100 years, far past any schedule the service keeps
 * (30-day grants, yearly charges, retention) and far inside what a `Date` can hold (year 275760),
 * so a stored offset can never make "now" an invalid date and brick every write and restart.
 */
export const MAX_CLOCK_OFFSET_MS = 100 * 366 * 24 * 3600 * 1000;

export class ClockOffsetError extends Error {}

function isValidOffset(ms: number): boolean {
  return Number.isSafeInteger(ms) && ms >= 0 && ms <= MAX_CLOCK_OFFSET_MS;
}

export async function loadClockOffset(db: Db, clock: TestClock): Promise<void> {
  const { rows } = await db.query<{ value: number }>('SELECT value FROM platform_settings WHERE key = $1', [clock.storageKey]);
  if (!rows[0]) return;
  const stored = Number(rows[0].value);
  // A data dir written by an older build may hold an offset out of range: start on real time
  // rather than refuse to start (the operator can advance again).
  if (isValidOffset(stored)) clock.setOffset(Math.max(clock.offset, stored));
}

/**
 * Advance atomically in the database, then adopt the stored offset. An advance that would carry
 * the offset past MAX_CLOCK_OFFSET_MS is refused before anything is written.
 */
export async function advanceClock(db: Db, clock: TestClock, seconds: number): Promise<void> {
  const ms = Math.round(seconds * 1000);
  if (!isValidOffset(ms)) throw new ClockOffsetError(`the test clock cannot run more than ${MAX_CLOCK_OFFSET_MS / 1000} seconds ahead`);
  // The bound is checked inside the statement, so two advances racing cannot together pass it.
  const { rows } = await db.query<{ value: number }>(
    `INSERT INTO platform_settings (key, value) SELECT $1, to_jsonb($2::bigint) WHERE $2::bigint <= $3::bigint
     ON CONFLICT (key) DO UPDATE SET value = to_jsonb((platform_settings.value)::text::bigint + $2::bigint)
       WHERE (platform_settings.value)::text::bigint + $2::bigint <= $3::bigint
     RETURNING value`,
    [clock.storageKey, ms, MAX_CLOCK_OFFSET_MS],
  );
  if (!rows[0]) throw new ClockOffsetError(`the test clock cannot run more than ${MAX_CLOCK_OFFSET_MS / 1000} seconds ahead`);
  clock.setOffset(Number(rows[0].value));
}

/** How often a process picks up an offset another process of the deployment advanced. */
export const CLOCK_SYNC_MS = 1000;

/**
 * Every process (api, worker, all) follows the shared offset: the advance is made by one `api`
 * process, and every other one, api processes included, must read the same clock for token expiry,
 * deadlines and schedules (C12.1). A failed read is left to the next one: readiness reports the
 * database.
 */
export function followClockOffset(db: Db, clock: TestClock): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    running ??= loadClockOffset(db, clock).catch(() => {}).finally(() => (running = null));
  }, CLOCK_SYNC_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
