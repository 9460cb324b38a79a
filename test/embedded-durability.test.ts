// The embedded database must survive a hard kill: a writer process killed with SIGKILL in the middle
// of writes reopens cleanly with every acknowledged write present. Several kill/reopen cycles run
// on one data dir, because some damage only shows on the second recovery.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openPGlite } from '../src/db/pglite.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WRITER = join(ROOT, 'test', 'fixtures', 'durability-writer.ts');

const CYCLES = 3;
const MIN_ACKS = 200;
const MIN_WRITING_MS = 300;
// A fresh data dir takes seconds to create (initdb); a slow 2-core CI machine gets plenty of room.
const ACK_TIMEOUT_MS = 30_000;

/** Same as the writer's payload: a surviving row must also carry its full, intact payload. */
function payloadFor(id: number): string {
  return `probe-${id}-` + 'x'.repeat(300);
}

/**
 * Start the writer on `dataDir`, wait until it has acknowledged at least MIN_ACKS writes over at
 * least MIN_WRITING_MS, then SIGKILL it. Resolves to the ids it acknowledged before it died.
 */
async function writeThenKill(dataDir: string): Promise<number[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const acked: number[] = [];
  let stderr = '';
  let partial = '';
  let firstAckAt = 0;
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    // 'close', not 'exit': by then every byte the writer got into the pipe has been read.
    child.on('close', (code, signal) => res({ code, signal })),
  );

  const acknowledged = new Promise<void>((res, rej) => {
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) rej(err);
      else res();
    };
    const timer = setTimeout(
      () => finish(new Error(`writer acknowledged only ${acked.length} writes in ${ACK_TIMEOUT_MS} ms\n${stderr}`)),
      ACK_TIMEOUT_MS,
    );
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const m = /^ack (\d+)$/.exec(line);
        if (!m) continue;
        acked.push(Number(m[1]));
        if (!firstAckAt) firstAckAt = Date.now();
      }
      if (acked.length >= MIN_ACKS && Date.now() - firstAckAt >= MIN_WRITING_MS) finish();
    });
    child.on('error', (err) => finish(err));
    void exited.then(({ code, signal }) =>
      finish(new Error(`writer exited early (code ${code}, signal ${signal})\n${stderr}`)),
    );
  });

  try {
    await acknowledged;
  } finally {
    // Still writing: the kill lands mid-transaction or mid-commit. (On failure: no stray writer.)
    child.kill('SIGKILL');
  }
  const { signal } = await exited;
  expect(signal).toBe('SIGKILL');
  // `acked` now holds every complete line. A last line without its newline is not counted.
  return acked;
}

describe('embedded database durability', () => {
  it('keeps every acknowledged write across repeated SIGKILLs and reopens', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-durability-'));
    const dataDir = join(dir, 'data');
    const allAcked = new Set<number>();
    try {
      for (let cycle = 1; cycle <= CYCLES; cycle++) {
        const acked = await writeThenKill(dataDir);
        expect(acked.length).toBeGreaterThanOrEqual(MIN_ACKS);
        for (const id of acked) {
          // Each cycle continues with new ids.
          expect(allAcked.has(id)).toBe(false);
          allAcked.add(id);
        }

        const db = await openPGlite({ dataDir });
        try {
          const { rows } = await db.query<{ id: number; payload: string }>(
            'SELECT id, payload FROM durability_probe ORDER BY id',
          );
          const present = new Map(rows.map((r) => [r.id, r.payload]));
          const missing = [...allAcked].filter((id) => present.get(id) !== payloadFor(id));
          expect(missing, `cycle ${cycle}: acknowledged writes lost or damaged`).toEqual([]);
          // More rows than acks is fine (a commit can land before its ack is printed); fewer is not.
          expect(rows.length).toBeGreaterThanOrEqual(allAcked.size);
          // Each transaction inserted one row and bumped the counter: atomic, so they agree.
          const counter = await db.query<{ n: number }>('SELECT n FROM durability_counter WHERE k = 1');
          expect(counter.rows[0].n).toBe(rows.length);
          // The database still takes writes after recovery.
          await db.transaction(async (tx) => {
            await tx.query('UPDATE durability_counter SET n = n WHERE k = 1');
          });
        } finally {
          await db.close();
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
