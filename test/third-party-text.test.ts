// Text from third parties that the platform keeps as records (storable-text.ts): webhook receivers'
// response bodies, shipping apps' rate replies, function outputs and error messages. Clients'
// input is refused with a 400 (input-guard.test.ts); what a third party answers cannot be refused,
// so it must never reach a write unstorable: one NUL in a batched write failed the whole batch,
// other apps' records with it (a webhook attempt whose record fails is sent again, forever).
//
// The sweep: every unstorable form (a NUL, a lone high or low surrogate, a reversed pair), at every
// entry point, and the rule itself checked against the database it protects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { attemptsOf, deliveriesOfStore, emitEvent, runDeliveries, subscribe, webhookStore } from './fixtures/webhook-setup.js';
import fc from 'fast-check';
import { firstUnstorable, isStorableText, storableText, unstorableTextAt, type UnstorableAt } from '../src/functions/runtime/storable-text.js';
import { assertCleanInput } from '../src/http/input-guard.js';
import { evaluateOnce } from '../src/functions/runtime/index.js';
import { parseRateReply } from '../src/checkout/rate-reply.js';

/** Each way a JavaScript string can hold what PostgreSQL will not store. */
const UNSTORABLE = { nul: 'a\u0000b', loneHigh: 'a\ud800b', loneHighAtEnd: 'ab\ud83d', loneLow: 'a\udc00b', reversedPair: 'a\ude00\ud83db' };
const STORABLE = { plain: 'plain', pair: 'smile 😀', accents: 'wörld ✓', controls: 'tab\tnew\nline\u0001', empty: '' };

let h: Harness;
let rx: Receiver;
beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver((req) => ({ status: 200, body: req.path === '/nul' ? 'ok\u0000\u0000done' : 'fine' }));
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

/** Whether the database stores the string as text and inside jsonb. */
async function databaseStores(text: string): Promise<boolean> {
  try {
    await h.deps.db.query('SELECT $1::text AS t, $2::jsonb AS j', [text, JSON.stringify({ [text]: text })]);
    return true;
  } catch {
    return false;
  }
}

describe('the rule is the database\'s', () => {
  it('isStorableText says exactly what PostgreSQL stores, over a fuzz of short strings; storableText always makes it storable', async () => {
    const alphabet = ['a', '\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '😀', 'é', '\n'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const samples = [...Object.values(UNSTORABLE), ...Object.values(STORABLE)];
    for (let i = 0; i < 250; i++) samples.push(Array.from({ length: next() % 6 }, () => alphabet[next() % alphabet.length]).join(''));
    for (const s of samples) {
      expect(isStorableText(s), JSON.stringify(s)).toBe(await databaseStores(s));
      const made = storableText(s);
      expect(made.length).toBe(s.length);
      expect(await databaseStores(made), JSON.stringify(made)).toBe(true);
      if (isStorableText(s)) expect(made).toBe(s);
    }
  });

  it('unstorableTextAt names the first unstorable string or key of a JSON value', () => {
    expect(unstorableTextAt({ a: [1, 'ok', { b: 'x' }] }, 'output')).toBeNull();
    expect(unstorableTextAt({ a: [1, 'ok', { b: UNSTORABLE.nul }] }, 'output')).toBe('output.a[2].b');
    expect(unstorableTextAt({ [UNSTORABLE.loneLow]: 1 }, 'output')).toBe('output key');
    expect(unstorableTextAt(UNSTORABLE.loneHigh, 'output')).toBe('output');
  });

  // The one walk behind the input guard and the output check (firstUnstorable), against the plain
  // recursive reading of its rule: the first problem in document order, an object's keys before
  // its values, a container `maxDepth` levels down a problem of its own.
  it('firstUnstorable finds what a plain recursive walk finds, for any JSON value, depth limit and root', () => {
    const reference = (v: unknown, path: string, depth: number, maxDepth: number): UnstorableAt | null => {
      if (typeof v === 'string') return isStorableText(v) ? null : { path, problem: 'text' };
      if (v === null || typeof v !== 'object') return null;
      if (depth >= maxDepth) return { path, problem: 'depth' };
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const found = reference(v[i], `${path}[${i}]`, depth + 1, maxDepth);
          if (found) return found;
        }
        return null;
      }
      if (Object.keys(v).some((k) => !isStorableText(k))) return { path: `${path} key`, problem: 'key' };
      for (const [k, child] of Object.entries(v)) {
        const found = reference(child, path ? `${path}.${k}` : k, depth + 1, maxDepth);
        if (found) return found;
      }
      return null;
    };
    const text = fc.oneof({ weight: 6, arbitrary: fc.string({ maxLength: 4 }) }, fc.constantFrom(...Object.values(UNSTORABLE)));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, text, fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 4 }),
      object: fc.dictionary(text, tie('value'), { maxKeys: 4 }),
    })).value;
    fc.assert(fc.property(json, fc.integer({ min: 0, max: 6 }), fc.constantFrom('', 'body', 'output'), (value, maxDepth, root) => {
      const expected = reference(value, root, 0, maxDepth);
      expect(firstUnstorable(value, root, maxDepth)).toEqual(expected);
      // The guard names the same place (depth by the limit).
      let message: string | null = null;
      try {
        assertCleanInput(value, root || 'value', maxDepth);
      } catch (err) {
        message = (err as Error).message;
      }
      const again = reference(value, root || 'value', 0, maxDepth);
      if (!again) expect(message).toBeNull();
      else if (again.problem === 'depth') expect(message).toBe(`${root || 'value'} is nested too deeply (at most ${maxDepth} levels)`);
      else expect(message).toBe(`${again.path} must not contain NUL characters or unpaired UTF-16 surrogates`);
    }), { numRuns: 2000 });
  });
});

describe('webhook receivers\' response bodies (C8.5 delivery log)', () => {
  it('a receiver answering NUL bytes: its attempt is recorded (U+FFFD in the log), and so is another delivery written in the same batch', async () => {
    const s = await webhookStore(h);
    await subscribe(h, s.accessToken, 'orders/create', `${rx.url}/nul`);
    await subscribe(h, s.accessToken, 'orders/paid', `${rx.url}/fine`);
    await emitEvent(h, s.merchant.storeId, 'orders/create', { id: 1 });
    await emitEvent(h, s.merchant.storeId, 'orders/paid', { id: 1 });
    await runDeliveries(h);
    const deliveries = await deliveriesOfStore(h, s.merchant.storeId);
    expect(deliveries.map((d) => d.status).sort()).toEqual(['success', 'success']);
    for (const d of deliveries) expect((await attemptsOf(h, d.id)).length).toBe(1);
    const res = await h.req('GET', `/apps/developer/${s.app.appId}/webhook-deliveries`, { token: s.partner.token });
    expect(res.statusCode).toBe(200);
    const bodies = res.json().data.deliveries.map((d: { address: string; responseBody: string }) => [d.address.replace(rx.url, ''), d.responseBody]);
    expect(Object.fromEntries(bodies)).toEqual({ '/nul': 'ok\ufffd\ufffddone', '/fine': 'fine' });
  });
});

describe('shipping apps\' rate replies (C15.3)', () => {
  const reply = (rate: Record<string, unknown>) => JSON.stringify({ rates: [{ service_name: 'Ground', service_code: 'ground', total_price: '899', currency: 'USD', ...rate }, { service_name: 'Express', service_code: 'express', total_price: 1999, currency: 'USD' }] });

  it('a rate whose name or code is unstorable is dropped, the others kept; an unstorable description or date is made storable or left out', () => {
    for (const [form, text] of Object.entries(UNSTORABLE)) {
      for (const field of ['service_name', 'service_code']) {
        expect(parseRateReply(reply({ [field]: text }), 'USD')!.map((r) => r.service_code), `${field} ${form}`).toEqual(['express']);
      }
      const [ground] = parseRateReply(reply({ description: text, min_delivery_date: text, max_delivery_date: text }), 'USD')!;
      expect(ground.description, form).toBe(storableText(text));
      expect(isStorableText(ground.description!)).toBe(true);
      expect([ground.min_delivery_date, ground.max_delivery_date]).toEqual([null, null]);
    }
  });

  it('a description cut to its 1,000 characters (code points) keeps a character outside the BMP whole', () => {
    const [ground] = parseRateReply(reply({ description: `${'d'.repeat(999)}😀 and more` }), 'USD')!;
    expect(ground.description).toBe(`${'d'.repeat(999)}😀`);
    const [emoji] = parseRateReply(reply({ description: '😀'.repeat(1001) }), 'USD')!;
    expect(emoji.description).toBe('😀'.repeat(1000));
  });
});

describe('function outputs and error messages (C11.4, C11.5)', () => {
  const echo = (expression: string, x: string, target = 'cart.delivery-options.transform.run') => evaluateOnce({ target, expression, input: { x } });

  it('an output holding an unstorable string (from the input) fails as InvalidOutputError naming where; a storable one succeeds', () => {
    const cases: [string, string, string][] = [
      ['cart.delivery-options.transform.run', '{"operations": [{"rename": {"handle": "h", "title": input.x}}]}', 'output.operations[0].rename.title'],
      ['cart.payment-methods.transform.run', '{"operations": [{"hide": {"handle": input.x}}]}', 'output.operations[0].hide.handle'],
      ['cart.validations.generate.run', '{"operations": [{"validationAdd": {"errors": [{"message": input.x, "target": "cart"}]}}]}', 'output.operations[0].validationAdd.errors[0].message'],
      ['cart.lines.discounts.generate.run', '{"operations": [{"orderDiscountAdd": {"message": input.x, "value": {"percentage": 5}}}]}', 'output.operations[0].orderDiscountAdd.message'],
    ];
    for (const [target, expression, where] of cases) {
      for (const [form, x] of Object.entries(UNSTORABLE)) {
        expect(echo(expression, x, target), `${target} ${form}`).toMatchObject({
          status: 'failure', errorType: 'InvalidOutputError', errorMessage: `${where} must not contain NUL characters or unpaired UTF-16 surrogates`, output: null,
        });
      }
      for (const x of Object.values(STORABLE).filter(Boolean)) expect(echo(expression, x, target).status, `${target} ${JSON.stringify(x)}`).toBe('success');
    }
  });

  it('an error message quoting an unstorable string is recorded with U+FFFD in its place', () => {
    for (const [form, x] of Object.entries(UNSTORABLE)) {
      const r = echo('int(input.x)', x);
      expect(r.errorType, form).toBe('RuntimeError');
      expect(isStorableText(r.errorMessage!), `${form}: ${JSON.stringify(r.errorMessage)}`).toBe(true);
    }
  });
});
