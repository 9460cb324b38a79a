// svc-app, the SDK's command line (issue 14): a function run locally with the
// platform's runtime, a recorded run replayed on the real platform, a saved webhook request checked,
// a test delivery and a shipping rate request test triggered on the real platform. Run as a real process where it reads files or
// triggers a delivery; `main` in-process against a listening platform.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback, type Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver } from './fixtures/webhook-receiver.js';
import { verifyMessage } from '../packages/app-sdk/src/webhooks.js';
import { createTestApp, installApp, signupMerchant, signupPartner } from './helpers/actors.js';
import { ROOT } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';
import { main } from '../packages/app-sdk/src/cli.js';
import { signBody as platformSign } from '../src/webhooks/deliveries.repo.js';
import { insertRuns } from '../src/functions/function-runs.repo.js';
import { uuidv7 } from '../src/ids.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'packages/app-sdk/src/cli.ts');
const cli = (args: string[]) => run(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: ROOT }).then(
  ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
  (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
);

let h: Harness;
let base: string;
beforeAll(async () => {
  // A database of its own on PostgreSQL: another file's delivery run must not take this file's test delivery.
  h = await createWebhookHarness();
  base = await listenOnLoopback(h);
});
afterAll(() => h?.close());

describe('svc-app', () => {
  it('function run: the local result, exit 0 on success and 1 on failure', async () => {
    const dir = tempDir('svc-cli-');
    writeFileSync(join(dir, 'hide.cel'), '{"operations": input.deliveryOptions.filter(o, double(o.price) > 10.0).map(o, {"hide": {"handle": o.handle}})}');
    writeFileSync(join(dir, 'input.json'), JSON.stringify({ deliveryOptions: [{ handle: 'a', price: '5.00' }, { handle: 'b', price: '12.00' }] }));
    writeFileSync(join(dir, 'broken.cel'), 'input.nothing.here');
    const ok = await cli(['function', 'run', '--target', 'cart.delivery-options.transform.run', '--expression', join(dir, 'hide.cel'), '--input', join(dir, 'input.json')]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ status: 'success', output: { operations: [{ hide: { handle: 'b' } }] } });
    const bad = await cli(['function', 'run', '--target', 'cart.delivery-options.transform.run', '--expression', join(dir, 'broken.cel'), '--input', join(dir, 'input.json')]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ status: 'failure', errorType: 'RuntimeError' });
    const usage = await cli(['function', 'run']);
    expect(usage.code).toBe(2);
    // A usage error is the shell's stderr: `svc-app ... > result.json` never holds the usage.
    expect(usage.stderr).toContain('missing --target');
    expect(usage.stderr).toContain('usage:');
    expect(usage.stdout).toBe('');
  }, 60_000);

  it('webhook verify: a saved request signed by the platform passes; changed, it fails', async () => {
    const dir = tempDir('svc-cli-');
    const body = JSON.stringify({ id: 7, email: 'buyer@example.com' });
    const saved = { headers: { 'X-SVC-Hmac-SHA256': platformSign('s3cret', body), 'X-SVC-Topic': 'orders/create', 'X-SVC-Shop-Domain': 'demo-store' }, body };
    writeFileSync(join(dir, 'ok.json'), JSON.stringify(saved));
    writeFileSync(join(dir, 'changed.json'), JSON.stringify({ ...saved, body: body.replace('7', '8') }));
    const ok = await cli(['webhook', 'verify', '--secret', 's3cret', '--request', join(dir, 'ok.json')]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, topic: 'orders/create', shop: 'demo-store', payload: { id: 7 } });
    const changed = await cli(['webhook', 'verify', '--secret', 's3cret', '--request', join(dir, 'changed.json')]);
    expect(changed.code).toBe(1);
    expect(JSON.parse(changed.stdout)).toEqual({ ok: false, reason: 'bad signature' });
  }, 60_000);

  it('function replay: a recorded run replayed on the platform with a new expression', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { extensions: { functions: [{ handle: 'v', target: 'cart.validations.generate.run', expression: '{"operations": []}' }] } });
    await installApp(h, merchant, app);
    const functionId = (await h.req('GET', '/functions', { token: merchant.token })).json().data.functions[0].functionId;
    const runId = uuidv7();
    await insertRuns(h.deps.db, [{
      id: runId, appId: app.appId, storeId: merchant.storeId, functionId, functionHandle: 'v', target: 'cart.validations.generate.run', status: 'success',
      errorType: null, errorMessage: null, input: { n: 2 }, inputBytes: 7, output: { operations: [] }, outputBytes: 17, durationMs: 1, checkoutId: null,
      checkoutTokenSealed: null, createdAt: new Date(),
    }]);
    const dir = tempDir('svc-cli-');
    writeFileSync(join(dir, 'new.cel'), '{"operations": [{"validationAdd": {"errors": [{"message": "n is " + string(int(input.n)), "target": "cart"}]}}]}');
    const lines: string[] = [];
    const code = await main(['function', 'replay', '--base', base, '--token', partner.token, '--app', app.appId, '--handle', 'v', '--run', runId, '--expression', join(dir, 'new.cel')], (l) => lines.push(l));
    expect(code).toBe(0);
    expect(JSON.parse(lines.join('\n'))).toMatchObject({ status: 'success', output: { operations: [{ validationAdd: { errors: [{ message: 'n is 2', target: 'cart' }] } }] } });
  });
  it('webhook trigger: the platform sends the signed sample; exit 0 on a 2xx, 1 on a failure or a refusal, 2 on usage', async () => {
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const rx = await startReceiver((req) => (req.path === '/fail' ? { status: 500 } : { status: 200, body: 'ok' }));
    try {
      const args = (topic: string, address: string) => ['webhook', 'trigger', '--base', base, '--token', partner.token, '--app', app.appId, '--topic', topic, '--address', address];
      const ok = await cli(args('orders/create', `${rx.url}/hooks`));
      expect(ok.code).toBe(0);
      const printed = JSON.parse(ok.stdout);
      expect(printed).toEqual({
        deliveryId: expect.any(String), webhookId: expect.any(String), success: true, status: 'success', responseStatus: 200,
        durationMs: expect.any(Number), error: null,
      });
      expect(rx.received).toHaveLength(1);
      expect(rx.received[0].headers['x-svc-webhook-id']).toBe(printed.webhookId);
      expect(verifyMessage({ rawBody: rx.received[0].raw, headers: rx.received[0].headers, secret: app.clientSecret })).toMatchObject({ ok: true, topic: 'orders/create' });

      const failed = await cli(args('customers/redact', `${rx.url}/fail`));
      expect(failed.code).toBe(1);
      expect(JSON.parse(failed.stdout)).toMatchObject({ success: false, status: 'failed', responseStatus: 500 });

      const refused = await cli(args('orders/nope', `${rx.url}/hooks`));
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({ status: 422, state: 'error', message: 'topic is not a topic the platform delivers' });

      const usage = await cli(['webhook', 'trigger', '--base', base, '--app', app.appId]);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('missing --token, --topic, --address');
      expect(usage.stdout).toBe('');
      expect(rx.received).toHaveLength(2);
    } finally {
      await rx.close();
    }
  }, 60_000);
  it("rates test: the rates a checkout would offer and each dropped rate's reason; exit 0 with a rate, 1 with none or a refusal, 2 on usage", async () => {
    const rx = await startReceiver((req) => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(req.path === '/none'
        ? { rates: [{ service_name: 'Euro', service_code: 'eu', total_price: 900, currency: 'EUR' }] }
        : { rates: [{ service_name: 'Standard', service_code: 'std', total_price: 1250, currency: 'USD' }, { service_name: 'Bad', service_code: 'bad', total_price: 'ten', currency: 'USD' }] }),
    }));
    try {
      const partner = await signupPartner(h);
      const app = await createTestApp(h, partner.token, { scopes: ['write_shipping'], extensions: { shipping: { ratesUrl: `${rx.url}/rates` } } });
      const args = ['rates', 'test', '--base', base, '--token', partner.token, '--app', app.appId];
      const ok = await cli(args);
      expect(ok.code, ok.stderr).toBe(0);
      const printed = JSON.parse(ok.stdout);
      expect(printed).toMatchObject({
        address: `${rx.url}/rates`, currency: 'USD', outcome: { responseStatus: 200, error: null }, malformed: null,
        rates: [{ handle: `app-${app.handle}-std`, title: 'Standard', price: '12.50' }],
        dropped: [{ index: 1, reason: 'rates[1].total_price must be a whole number of minor units, as an integer or a string of digits' }],
      });
      expect(printed.requestBody).toBeUndefined();
      expect(verifyMessage({ rawBody: rx.received[0].raw, headers: rx.received[0].headers, secret: app.clientSecret })).toMatchObject({ ok: true, topic: 'shipping/rates' });

      const none = await cli([...args, '--address', `${rx.url}/none`]);
      expect(none.code).toBe(1);
      expect(JSON.parse(none.stdout)).toMatchObject({ rates: [], dropped: [{ index: 0, reason: 'rates[0]: currency "EUR" is not the checkout\'s USD' }] });

      const refused = await cli([...args, '--currency', 'ZZZ']);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({ status: 422, message: 'currency must be an ISO 4217 currency code' });

      const usage = await cli(['rates', 'test', '--base', base, '--app', app.appId]);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('missing --token');
      expect(rx.received).toHaveLength(2);
    } finally {
      await rx.close();
    }
  }, 60_000);
  it('webhook verify: a delivery of the developer log, saved whole or as data.delivery, verifies; a file without a request says so', async () => {
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const rx = await startReceiver(() => ({ status: 200, body: 'ok' }));
    try {
      const triggered = await cli(['webhook', 'trigger', '--base', base, '--token', partner.token, '--app', app.appId, '--topic', 'orders/create', '--address', `${rx.url}/hooks`]);
      expect(triggered.code).toBe(0);
      const res = await fetch(`${base}/apps/developer/${app.appId}/webhook-deliveries/${JSON.parse(triggered.stdout).deliveryId}`, { headers: { authorization: `Bearer ${partner.token}` } });
      expect(res.status).toBe(200);
      const answer = await res.json();
      const dir = tempDir('svc-cli-');
      writeFileSync(join(dir, 'answer.json'), JSON.stringify(answer));
      writeFileSync(join(dir, 'delivery.json'), JSON.stringify(answer.data.delivery));
      for (const file of ['answer.json', 'delivery.json']) {
        const verified = await cli(['webhook', 'verify', '--secret', app.clientSecret, '--request', join(dir, file)]);
        expect(verified.code, verified.stdout + verified.stderr).toBe(0);
        expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, topic: 'orders/create' });
      }
      writeFileSync(join(dir, 'nothing.json'), JSON.stringify({ topic: 'orders/create' }));
      const nothing = await cli(['webhook', 'verify', '--secret', app.clientSecret, '--request', join(dir, 'nothing.json')]);
      expect(nothing.code).toBe(1);
      expect(nothing.stderr).toContain('nothing.json holds no saved request: give { "headers": {...}, "body": "<the raw body>" }');
      const requestHeaders = answer.data.delivery.requestHeaders;
      writeFileSync(join(dir, 'parsed.json'), JSON.stringify({ headers: requestHeaders, body: JSON.parse(answer.data.delivery.requestBody) }));
      const parsed = await cli(['webhook', 'verify', '--secret', app.clientSecret, '--request', join(dir, 'parsed.json')]);
      expect(parsed.code).toBe(1);
      expect(parsed.stderr).toContain('"body" must be the raw body as one string');
    } finally {
      await rx.close();
    }
  }, 60_000);

  it('--help, -h or help prints the usage on stdout with exit 0, also after a command', async () => {
    for (const args of [['--help'], ['-h'], ['help'], ['function', 'run', '--help'], ['webhook', 'trigger', '-h']]) {
      const lines: string[] = [];
      const errors: string[] = [];
      expect(await main(args, (l) => lines.push(l), (l) => errors.push(l))).toBe(0);
      expect(lines.join('\n')).toContain('svc-app webhook trigger --base <url>');
      expect(lines.join('\n')).toContain('svc-app rates test --base <url> --token <developer JWT> --app <appId> [--address <url>] [--currency <code>]');
      expect(errors).toEqual([]);
    }
  });

  it('the ids it is given are one path segment each: an id with / ? # or .. names no other route; ".", ".." or "" is a usage error', async () => {
    // A stand-in for the platform that records the paths it is asked for.
    const platform = await startReceiver(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 200, data: null }) }));
    try {
      const lines: string[] = [];
      const say = (l: string) => lines.push(l);
      await main(['webhook', 'trigger', '--base', platform.url, '--token', 't', '--app', '../../api/v1?x=1#y', '--topic', 'orders/create', '--address', 'https://example.com/h'], say);
      await main(['function', 'replay', '--base', platform.url, '--token', 't', '--app', 'a/b', '--handle', 'h?', '--run', '..x'], say);
      expect(platform.received.map((r) => r.path)).toEqual([
        '/apps/developer/..%2F..%2Fapi%2Fv1%3Fx%3D1%23y/webhooks/test',
        '/apps/developer/a%2Fb/functions/h%3F/runs/..x/replay',
      ]);
      for (const [bad, message] of [['..', 'is not an app id'], ['.', 'is not an app id'], ['', 'missing --app']]) {
        lines.length = 0;
        expect(await main(['webhook', 'trigger', '--base', platform.url, '--token', 't', '--app', bad, '--topic', 'orders/create', '--address', 'https://example.com/h'], () => {}, say)).toBe(2);
        expect(lines[0]).toContain(message);
      }
      expect(platform.received).toHaveLength(2);
    } finally {
      await platform.close();
    }
  });
});
