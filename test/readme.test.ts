// README.md as a newcomer follows it (issue 10): a service started as `npm start` starts it, on an
// empty data dir, prints the banner the README shows, and the README's shell blocks ("Try it in
// one minute", the webhook subscription, then "Try a checkout") run as written, in one bash, over real HTTP; only the
// port differs. Embedded database only, as the README's walkthrough.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { freePort, hasEnv, processes, ROOT, startService } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';
import { createHarness } from './helpers/harness.js';

const run = promisify(execFile);
const onPGlite = !inject('testDatabaseUrl');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  expect(start, `README section "${title}"`).toBeGreaterThanOrEqual(0);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The fenced code blocks of a README section in one language ('' for plain text). */
const blocks = (text: string, lang: string) =>
  [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].filter((m) => m[1] === lang).map((m) => m[2]);

const MARK = '--- end of block ---';
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.runIf(onPGlite)('README.md, followed as written', () => {
  it('the banner it shows, and its walkthrough: install the demo app, check hmac, exchange the code, call the API, subscribe a webhook', async () => {
    const port = await freePort();
    const svc = startService({ SVC_DATA_DIR: tempDir('svc-readme-'), PORT: String(port) });
    await svc.waitFor(/^ {2}The whole install flow.*$/m, 120_000);

    const appPort = await freePort();
    const local = (text: string) => text.replaceAll('localhost:3000', `localhost:${port}`).replaceAll('localhost:4000', `localhost:${appPort}`);
    const tryIt = section('Try it in one minute');
    const [banner] = blocks(tryIt, '');
    for (const line of local(banner).split('\n').filter(Boolean)) {
      const pattern = escape(line).replace(/(svcapp|svcat)_\\\.\\\.\\\./g, '$1_[A-Za-z0-9_-]+');
      expect(svc.output(), line).toMatch(new RegExp(`^${pattern}$`, 'm'));
    }

    const steps = [
      ...blocks(tryIt, 'sh'), ...blocks(section('Webhooks'), 'sh'), ...blocks(section('Try a checkout'), 'sh'), ...blocks(section('Build an app in ten minutes'), 'sh'),
    ];
    expect(steps).toHaveLength(11);
    const script = steps.map((step) => `${local(step)}\necho; echo '${MARK}'`).join('\n');
    // From the repository's root, as the README says ("Build an app" starts the example app with npm
    // there); the example app's port and token file are the test's own.
    const tokens = join(tempDir('svc-readme-app-'), 'tokens.json');
    let stdout: string;
    try {
      ({ stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
        cwd: ROOT, timeout: 120_000, env: { ...process.env, PORT: String(appPort), TOKENS_FILE: tokens },
      }));
    } catch (err) {
      // What the blocks printed before one failed: which block, and what it got back.
      console.error(`README blocks' output before the failure:\n${(err as { stdout?: string }).stdout ?? ''}`);
      throw err;
    } finally {
      // `npm start -w examples/shipping-app &`: npm, its shell and node, none of whose command lines
      // names the example's path; all three carry this test's own TOKENS_FILE.
      for (const pid of processes((p) => p.pid !== process.pid && hasEnv(p.pid, 'TOKENS_FILE', tokens))) process.kill(pid, 'SIGKILL');
      rmSync(join(ROOT, 'shipping-app.log'), { force: true });
    }
    const [credentials, redirect, hmac, apiCall, webhook, rates, checkout, functionLogs, registered, installed, shipped] = stdout.split(`${MARK}\n`).map((out) => out.trim());

    expect(credentials).toBe('');
    expect(redirect).toMatch(/^https:\/\/demo-app\.example\.com\/auth\?code=svccode_\S+&hmac=[0-9a-f]{64}&shop=demo-store&state=\S+&timestamp=\d+$/);
    expect(hmac).toBe('hmac ok');
    expect(JSON.parse(apiCall).products).toHaveLength(1);
    expect(JSON.parse(webhook).webhook).toMatchObject({ topic: 'orders/create', address: 'https://app.example.com/hooks', secret: expect.any(String) });
    // Two totes (36.00): below the free-shipping bound, so the flat Domestic rate comes first (cheapest first).
    const offered = JSON.parse(rates).data.shipping_rates;
    expect(offered.map((r: { title: string }) => r.title)).toContain('Domestic');
    const [total, orderName] = checkout.split('\n');
    expect(total).toBe((36 + Number(offered[0].price)).toFixed(2));
    expect(orderName).toMatch(/^#\d+$/);
    // The demo functions ran at the demo checkout and at this one: their runs are in the logs.
    expect(Number(functionLogs)).toBeGreaterThanOrEqual(4);

    // Build an app in ten minutes: the example app registered, installed, offered and shipping.
    expect(registered).toBe('');
    expect(installed).toBe('Example Shipping is installed on demo-store.');
    const [titles, chosen, fulfillment, tracking] = shipped.split('\n');
    expect(titles.split(', ')).toEqual(expect.arrayContaining(['Domestic', 'Example Shipping Standard', 'Example Shipping Express']));
    expect(chosen).toBe('Example Shipping Standard');
    expect(fulfillment).toBe('fulfilled');
    expect(tracking).toMatch(/^EXS[0-9A-F]{12}$/);

    svc.child.kill('SIGTERM');
    expect((await svc.exited).code).toBe(0);
  }, 180_000);
});

// A newcomer follows one section at a time, perhaps in a new terminal: every variable a section's
// commands use and do not set must be named in that section's text (where it comes from), and set
// by a section before it. The run above takes all blocks in one shell, so it cannot see this.
describe('README.md: each walkthrough says which variables it takes from the others', () => {
  const sections = ['Try it in one minute', 'Try a checkout', 'Build an app in ten minutes', 'Webhooks'];
  const prose = (text: string) => text.replace(/^```\w*\n[\s\S]*?^```$/gm, '');
  const used = (code: string) => new Set([...code.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
  const assigned = (code: string) => new Set([...code.matchAll(/(?:^|[\s;(])(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]));

  it('names, in its text, every variable it takes from an earlier section; and an earlier section sets it', () => {
    const setBefore = new Set<string>();
    const problems: string[] = [];
    // In the README's order, so "earlier" is what a reader has run before.
    for (const title of [...sections].sort((a, b) => readme.indexOf(`\n## ${a}\n`) - readme.indexOf(`\n## ${b}\n`))) {
      const text = section(title);
      const code = blocks(text, 'sh').join('\n');
      const own = assigned(code);
      for (const name of used(code)) {
        if (own.has(name)) continue;
        if (!prose(text).includes(`\`$${name}\``)) problems.push(`"${title}" uses $${name} without saying where it comes from`);
        if (!setBefore.has(name)) problems.push(`"${title}" uses $${name}, which no earlier section sets`);
      }
      for (const name of own) setBefore.add(name);
    }
    expect(problems).toEqual([]);
  });
});

// An operator runs a job by its name (C12.2), and an unknown name is only a 404: the README's list
// is where the names are found, so every job the service registers must be in it (it once named
// five of nine).
describe('README.md: the background jobs', () => {
  it('names every job the service registers, in its list of jobs runnable on demand', async () => {
    const h = await createHarness();
    try {
      const start = readme.indexOf('Background jobs, also runnable on demand');
      expect(start, 'the README\'s list of background jobs').toBeGreaterThanOrEqual(0);
      const list = readme.slice(start, readme.indexOf('\n\n', start));
      const names = h.deps.jobs.names();
      expect(names.length).toBeGreaterThan(5);
      expect(names.filter((name) => !list.includes(`\`${name}\``))).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
