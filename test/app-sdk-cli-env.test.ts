// svc-app took the client secret (`webhook verify --secret`) and the developer JWT (`--token`) only
// on the command line, where anyone running `ps` sees them and the shell's history keeps them; the
// client secret must stay on the app's backend (app-api.md, Rules). They may now come from the
// environment, SVC_CLIENT_SECRET and SVC_DEVELOPER_TOKEN; an option given wins.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { ROOT } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';
import { main } from '../packages/app-sdk/src/cli.js';
import { signBody } from '../packages/app-sdk/src/signatures.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'packages/app-sdk/src/cli.ts');
/** The CLI as a real process, with `env` in place of whatever SVC_CLIENT_SECRET / SVC_DEVELOPER_TOKEN this shell has. */
const cli = (args: string[], env: Record<string, string> = {}) => {
  const { SVC_CLIENT_SECRET: _s, SVC_DEVELOPER_TOKEN: _t, ...inherited } = process.env;
  return run(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: ROOT, env: { ...inherited, ...env } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
};

const SECRET = 'the-apps-client-secret';
let request: string;
beforeAll(() => {
  const body = JSON.stringify({ id: 7 });
  request = join(tempDir('svc-cli-env-'), 'request.json');
  writeFileSync(request, JSON.stringify({ headers: { 'X-SVC-Hmac-SHA256': signBody(body, SECRET), 'X-SVC-Topic': 'orders/create', 'X-SVC-Shop-Domain': 'demo-store' }, body }));
});

// A stand-in for the platform: the bearer token each request came with, and a success to each.
let platform: Receiver;
beforeAll(async () => {
  platform = await startReceiver((req) => {
    const data = req.path.endsWith('/webhooks/test')
      ? { delivery: { deliveryId: 'd1', webhookId: 'w1' }, outcome: { success: true } }
      : req.path.endsWith('/shipping-rates/test')
        ? { requestBody: '{}', rates: [{ serviceName: 'Standard' }], dropped: [] }
        : { status: 'success' };
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 200, data }) };
  });
});
afterAll(() => platform?.close());
const bearers = () => platform.received.map((r) => r.headers.authorization);

describe('svc-app: the secret and the token from the environment', () => {
  it('webhook verify with the client secret only in SVC_CLIENT_SECRET; without it anywhere, the usage error', async () => {
    const ok = await cli(['webhook', 'verify', '--request', request], { SVC_CLIENT_SECRET: SECRET });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, topic: 'orders/create', shop: 'demo-store', payload: { id: 7 } });

    const missing = await cli(['webhook', 'verify', '--request', request]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing --secret');
    expect(missing.stderr).toContain('SVC_CLIENT_SECRET');
    expect(missing.stderr).toContain('usage:');
    expect(missing.stdout).toBe('');
  }, 60_000);

  it('webhook trigger with the developer JWT only in SVC_DEVELOPER_TOKEN', async () => {
    platform.received.length = 0;
    const ok = await cli(['webhook', 'trigger', '--base', platform.url, '--app', 'app-1', '--topic', 'orders/create', '--address', 'https://example.com/h'], { SVC_DEVELOPER_TOKEN: 'jwt-from-env' });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ deliveryId: 'd1', success: true });
    expect(bearers()).toEqual(['Bearer jwt-from-env']);

    const missing = await cli(['webhook', 'trigger', '--base', platform.url, '--app', 'app-1', '--topic', 'orders/create', '--address', 'https://example.com/h']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing --token');
    expect(missing.stderr).toContain('SVC_DEVELOPER_TOKEN');
    expect(missing.stderr).toContain('usage:');
    expect(platform.received).toHaveLength(1);
  }, 60_000);

  it('function replay and rates test take the token from the environment; an option given wins over it', async () => {
    platform.received.length = 0;
    const quiet = () => undefined;
    const env = { SVC_DEVELOPER_TOKEN: 'jwt-from-env', SVC_CLIENT_SECRET: 'not-the-secret' };
    expect(await main(['function', 'replay', '--base', platform.url, '--app', 'a', '--handle', 'h', '--run', 'r'], quiet, quiet, env)).toBe(0);
    expect(await main(['rates', 'test', '--base', platform.url, '--app', 'a'], quiet, quiet, env)).toBe(0);
    expect(await main(['rates', 'test', '--base', platform.url, '--app', 'a', '--token', 'jwt-from-option'], quiet, quiet, env)).toBe(0);
    expect(bearers()).toEqual(['Bearer jwt-from-env', 'Bearer jwt-from-env', 'Bearer jwt-from-option']);
    // The option's secret is the one checked: the environment's wrong one is not used.
    const verdicts: string[] = [];
    expect(await main(['webhook', 'verify', '--secret', SECRET, '--request', request], (l) => verdicts.push(l), quiet, env)).toBe(0);
    expect(await main(['webhook', 'verify', '--request', request], (l) => verdicts.push(l), quiet, env)).toBe(1);
    expect(JSON.parse(verdicts[1])).toEqual({ ok: false, reason: 'bad signature' });
  });

  it('the usage says so', async () => {
    const lines: string[] = [];
    expect(await main(['--help'], (l) => lines.push(l))).toBe(0);
    expect(lines.join('\n')).toContain('SVC_CLIENT_SECRET');
    expect(lines.join('\n')).toContain('SVC_DEVELOPER_TOKEN');
    expect(lines.join('\n')).toContain('an option given wins');
  });
});
