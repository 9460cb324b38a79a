// Review round 2, running the service (C1.2): what the operator writes in a variable is what the
// service uses. Real processes, on the embedded database or (with DATABASE_URL) a database of
// their own.
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startService, type ServiceProcess } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';
import { privateDatabase } from './fixtures/webhook-harness.js';
import { TEST_SECRET } from './helpers/harness.js';

describe('C1.2 SVC_ADMIN_PASSWORD', () => {
  let own: Awaited<ReturnType<typeof privateDatabase>> = null;
  let svc: ServiceProcess | null = null;
  afterAll(async () => {
    if (svc && svc.child.exitCode === null && svc.child.signalCode === null) svc.child.kill('SIGKILL');
    await svc?.exited;
    await own?.drop();
  });

  it('the operator logs in with the password exactly as set, spaces at its ends included', async () => {
    own = await privateDatabase({ prefix: 'rv2ops' });
    const port = await freePort();
    // A passphrase with spaces at its ends: login compares passwords as sent (it trims nothing), so
    // the account must hold exactly this value.
    const password = '  operator pass phrase ';
    svc = startService({
      SVC_DATA_DIR: tempDir('rv2-ops-config-'), PORT: String(port), SVC_SECRET: TEST_SECRET, SVC_SEED: 'none',
      SVC_ADMIN_EMAIL: 'ops@example.com', SVC_ADMIN_PASSWORD: password,
      ...(own ? { DATABASE_URL: own.url } : {}),
    });
    await svc.waitFor(/svc all process ready/);
    const login = (pw: string) => fetch(`http://127.0.0.1:${port}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ops@example.com', password: pw }),
    });
    const res = await login(password);
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.data.user.role).toBe('SUPER_ADMIN');
    // The value without its spaces is another password.
    expect((await login(password.trim())).status).toBe(401);
    svc.child.kill('SIGTERM');
    expect((await svc.exited).code).toBe(0);
  }, 120_000);
});

describe('C1.2 SVC_SECRET against the database it sealed', () => {
  let own: Awaited<ReturnType<typeof privateDatabase>> = null;
  const started: ServiceProcess[] = [];
  afterAll(async () => {
    for (const c of started) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await Promise.all(started.map((c) => c.exited));
    await own?.drop();
  });

  it('a start with another secret is refused as a configuration error naming SVC_SECRET; the right one still starts', async () => {
    own = await privateDatabase({ prefix: 'rv2ops' });
    const dataDir = tempDir('rv2-ops-secret-');
    const start = async (secret: string) => {
      const svc = startService({
        SVC_DATA_DIR: dataDir, PORT: String(await freePort()), SVC_SECRET: secret, SVC_SEED: 'demo',
        ...(own ? { DATABASE_URL: own.url } : {}),
      });
      started.push(svc);
      return svc;
    };
    const first = await start(TEST_SECRET);
    await first.waitFor(/svc all process ready/);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);

    // The demo's app secret was sealed with TEST_SECRET: another secret cannot open it, nor sign
    // what the first one signed. It was a start that printed a stack trace and answered 500 later.
    const other = await start('another-secret-of-at-least-32-characters');
    // Either it exits (refused) or it comes up (the bug): whichever first, then it is stopped.
    await Promise.race([other.exited, other.waitFor(/process ready/).catch(() => {})]);
    if (other.child.exitCode === null && other.child.signalCode === null) other.child.kill('SIGTERM');
    const exited = await other.exited;
    expect(other.output()).toContain('Configuration error: SVC_SECRET=(hidden, 40 characters): does not open the app secrets this database holds');
    expect(other.output()).not.toMatch(/\n\s+at /); // no stack trace
    expect(other.output()).not.toContain('process ready');
    expect(exited.code).toBe(2);

    const again = await start(TEST_SECRET);
    await again.waitFor(/svc all process ready/);
    again.child.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
  }, 180_000);
});
