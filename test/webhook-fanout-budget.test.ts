// Fan-out batches bounded by bytes as well as by count (C8.2). A batch claimed up to 200 events and
// made every (event, target) delivery in one transaction: with order or product bodies near the
// 1 MiB request limit and a few targets each, one batch held hundreds of MB in the process and in
// one statement. Now each batch is the longest prefix of the oldest events whose payload bytes
// times deliveries fit a budget (at least one event), and the rest waits for the next pass.
// Real database on both drivers; the budget is small here so that small bodies exercise it.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { subscribe, webhookStore } from './fixtures/webhook-setup.js';
import { emit } from '../src/outbox/emit.js';
import { fanOutBatch, fanOutPending, type FanOutOptions, type FanOutResult } from '../src/webhooks/fanout.js';
import type { Db, Queryable, QueryOptions } from '../src/db/db.js';

let h: Harness;
beforeAll(async () => {
  h = await createWebhookHarness();
});
afterAll(async () => {
  await h?.close();
});

const TOPIC = 'products/update';

/** A store whose `products/update` goes to `targets` places: a manifest webhook and API subscriptions. */
async function storeWithTargets(targets: number) {
  const s = await webhookStore(h, { extensions: { webhooks: [{ topic: TOPIC, uri: 'http://127.0.0.1:9/manifest' }] } });
  for (let i = 1; i < targets; i++) await subscribe(h, s.accessToken, TOPIC, `http://127.0.0.1:9/sub-${i}`);
  return s.merchant.storeId;
}

/** Events one millisecond apart (so "oldest first" is one order), each with a body of about `bytes`. */
async function emitEvents(storeId: string, sizes: number[]): Promise<string[]> {
  const base = h.clock.now().getTime();
  const ids: string[] = [];
  for (const [i, bytes] of sizes.entries()) {
    const event = await h.db.transaction((tx) => emit(tx, { storeId, topic: TOPIC, payload: { id: i, blob: 'x'.repeat(bytes) }, now: new Date(base + i) }));
    ids.push(event.id);
  }
  return ids;
}

interface EventState {
  id: string;
  fanned: boolean;
  deliveries: number;
  addresses: number;
  /** The bytes of its deliveries' bodies, summed. */
  bodyBytes: number;
}

async function eventsOf(storeId: string): Promise<EventState[]> {
  const { rows } = await h.db.query<EventState>(
    `SELECT e.id, e.fanned_out_at IS NOT NULL AS fanned, count(d.id)::int AS deliveries, count(DISTINCT d.address)::int AS addresses,
            coalesce(sum(octet_length(d.request_body)), 0)::float8 AS "bodyBytes"
     FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id
     WHERE e.store_id = $1 GROUP BY e.id, e.created_at ORDER BY e.created_at`,
    [storeId],
  );
  return rows;
}

/** Fan out batch by batch as the worker does, and what each batch took of the store's events. */
async function fanOutByBatch(storeId: string, options: FanOutOptions) {
  const batches: { result: FanOutResult; events: EventState[] }[] = [];
  const done = new Set<string>();
  for (;;) {
    const result = await fanOutBatch(h.db, h.deps.secrets, () => h.clock.now(), options);
    const events = (await eventsOf(storeId)).filter((e) => e.fanned && !done.has(e.id));
    for (const e of events) done.add(e.id);
    if (result.events) batches.push({ result, events });
    if (!result.more) return batches;
    if (batches.length > 1000) throw new Error('fan-out does not end');
  }
}

/** The statements made in the transactions of `fn`, with the length of their parameters. */
async function txStatementsOf(db: Db, fn: () => Promise<unknown>) {
  const seen: { name: string; paramChars: number }[] = [];
  const original = db.transaction.bind(db);
  const spy = vi.spyOn(db, 'transaction').mockImplementation(((work: (tx: Queryable) => Promise<unknown>, options?: unknown) =>
    original((tx) => work(new Proxy(tx, {
      get(target, prop, receiver) {
        if (prop !== 'query') return Reflect.get(target, prop, receiver);
        return (sql: string, params?: unknown[], opts?: QueryOptions) => {
          seen.push({ name: opts?.name ?? sql.trim().slice(0, 40), paramChars: (params ?? []).reduce<number>((n, p) => n + (typeof p === 'string' ? p.length : 0), 0) });
          return target.query(sql, params, opts);
        };
      },
    })), options as never)) as typeof db.transaction);
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return seen;
}

describe('C8.2: fan-out batches are bounded by bytes as well as by count', () => {
  it('a backlog of large events with several targets goes out in several batches, each within the budget, oldest first, every event exactly once', async () => {
    const storeId = await storeWithTargets(3);
    const ids = await emitEvents(storeId, Array(12).fill(40_000));
    const budget = 300_000; // two events of 40 KB to 3 targets each

    let batches: Awaited<ReturnType<typeof fanOutByBatch>> = [];
    const statements = await txStatementsOf(h.db, async () => {
      batches = await fanOutByBatch(storeId, { budgetBytes: budget });
    });

    // A claim this heavy brings sizes only; the payloads of each batch are read once it is cut.
    expect(statements.filter((s) => s.name === 'webhook_fanout_payloads').length).toBe(batches.length);
    expect(batches.length).toBeGreaterThanOrEqual(5);
    const order: string[] = [];
    for (const { result, events } of batches) {
      expect(result.events).toBe(events.length);
      expect(result.bytes).toBeLessThanOrEqual(budget);
      // What was really written: the bodies of the batch's deliveries.
      expect(events.reduce((n, e) => n + e.bodyBytes, 0)).toBeLessThanOrEqual(budget);
      expect(result.deliveries).toBe(3 * events.length);
      order.push(...events.map((e) => e.id));
    }
    // Oldest first: the batches, one after the other, are the events in the order they were made.
    expect(order).toEqual(ids);
    const final = await eventsOf(storeId);
    expect(final.map((e) => [e.fanned, e.deliveries, e.addresses])).toEqual(ids.map(() => [true, 3, 3]));
  });

  it('an event over the budget alone still goes out, alone in its batch, and the events after it follow', async () => {
    const storeId = await storeWithTargets(3);
    const ids = await emitEvents(storeId, [1_000, 150_000, 1_000, 1_000]);

    const batches = await fanOutByBatch(storeId, { budgetBytes: 100_000 });

    expect(batches.map((b) => b.events.map((e) => ids.indexOf(e.id)))).toEqual([[0], [1], [2, 3]]);
    expect(batches[1].result.bytes).toBeGreaterThan(100_000);
    const final = await eventsOf(storeId);
    expect(final.map((e) => [e.fanned, e.deliveries, e.addresses])).toEqual(ids.map(() => [true, 3, 3]));
    expect(final[1].bodyBytes).toBeGreaterThan(3 * 150_000);
  });

  it('events with many targets: a claim read whole is still cut by payload times deliveries', async () => {
    // 20 events of 900 bytes (within the eighth of the budget read with the claim) to 10 targets
    // each weigh about 190 KB: over a budget of 160 KB.
    const storeId = await storeWithTargets(10);
    const ids = await emitEvents(storeId, Array(20).fill(900));

    let batches: Awaited<ReturnType<typeof fanOutByBatch>> = [];
    const statements = await txStatementsOf(h.db, async () => {
      batches = await fanOutByBatch(storeId, { budgetBytes: 160_000 });
    });

    // Read with the claim: no second read of payloads; so some were read and not sent, and came again.
    expect(statements.map((s) => s.name)).not.toContain('webhook_fanout_payloads');
    expect(batches.length).toBe(2);
    for (const { result } of batches) expect(result.bytes).toBeLessThanOrEqual(160_000);
    expect(batches.flatMap((b) => b.events.map((e) => e.id))).toEqual(ids);
    expect((await eventsOf(storeId)).map((e) => [e.fanned, e.deliveries, e.addresses])).toEqual(ids.map(() => [true, 10, 10]));
  });

  it('the usual batch of small events is read with its claim (no second read), and a body travels once however many targets', async () => {
    const small = await storeWithTargets(2);
    await emitEvents(small, Array(5).fill(500));
    const usual = await txStatementsOf(h.db, () => fanOutBatch(h.db, h.deps.secrets, () => h.clock.now()));
    expect(usual.map((s) => s.name).filter((n) => n.startsWith('webhook_'))).toEqual([
      'webhook_fanout_claim', 'webhook_targets', 'webhook_create_deliveries', 'webhook_fanout_done',
    ]);

    // One event of 200 KB to 10 targets: the insert's parameters hold its body once, not ten times.
    const wide = await storeWithTargets(10);
    await emitEvents(wide, [200_000]);
    const seen = await txStatementsOf(h.db, () => fanOutBatch(h.db, h.deps.secrets, () => h.clock.now()));
    const insert = seen.find((s) => s.name === 'webhook_create_deliveries')!;
    expect(insert.paramChars).toBeGreaterThan(200_000);
    expect(insert.paramChars).toBeLessThan(2 * 200_000);
    expect((await eventsOf(wide)).map((e) => [e.fanned, e.deliveries, e.addresses])).toEqual([[true, 10, 10]]);
  });

  it('several fan-out workers at once, each cut by bytes, never fan out an event twice nor leave one (SKIP LOCKED)', async () => {
    const storeId = await storeWithTargets(3);
    const ids = await emitEvents(storeId, Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? 30_000 : 3_000)));

    // Four workers' loops side by side (on PostgreSQL, four connections of the pool, really concurrent).
    // Claims of 8: each worker locks a few events, fans out the part within the budget and leaves
    // the rest of its claim to whoever comes next, so the workers work through one backlog together.
    const options = { limit: 8, budgetBytes: 100_000 };
    await Promise.all(Array.from({ length: 4 }, () => fanOutPending(h.db, h.deps.secrets, () => h.clock.now(), options)));

    const final = await eventsOf(storeId);
    expect(final.map((e) => e.id)).toEqual(ids);
    expect(final.map((e) => [e.fanned, e.deliveries, e.addresses])).toEqual(ids.map(() => [true, 3, 3]));
    const { rows: [dup] } = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT event_id, address FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       WHERE e.store_id = $1 GROUP BY event_id, address HAVING count(*) > 1) x`,
      [storeId],
    );
    expect(dup.n).toBe(0);
  });
});
