// The dashboard in a real browser (issue 15, "Proof"): Debian's Chromium driven by playwright-core
// over real HTTP, with the pages' own content security policy in force (a CSP violation fails the
// test) and axe-core run on every page visited (any violation fails the test). A developer signs in,
// creates an app with a function and a webhook, sees its failed delivery and redelivers it, then
// opens a function run and replays it with a new expression (and, in the sweep, sends a test
// webhook and a shipping rate test from the app's Test page); a merchant installs and uninstalls an
// app, deactivates a function, files a GDPR request, saves the store's address, and creates and
// deletes a shipping zone. Screenshots of each page are kept under test-results/dashboard/
// (gitignored; CI keeps them as artifacts).
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { listenOnLoopback, type Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { emitEvent, runDeliveries } from './fixtures/webhook-setup.js';
import { installApp, signupMerchant, signupPartner, unique } from './helpers/actors.js';
import { ROOT } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';
import { insertRuns } from '../src/functions/function-runs.repo.js';
import { uuidv7 } from '../src/ids.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`dashboard browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it)`);

const SHOTS = join(ROOT, 'test-results', 'dashboard');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let h: Harness;
let rx: Receiver;
let base: string;
let browser: Browser;
let page: Page;
const cspViolations: string[] = [];
const visited: string[] = [];
/** The POST forms the sweep in `check` found, ids written `:id`. */
const sweptActions = new Set<string>();

describe.skipIf(!hasChromium)('the dashboard in Chromium', () => {
  beforeAll(async () => {
    h = await createWebhookHarness();
    base = await listenOnLoopback(h);
    rx = await startReceiver((req) => ({ status: req.path === '/fail' ? 500 : 200, body: `answer for ${req.path}` }));
    rmSync(SHOTS, { recursive: true, force: true }); // this run's pages only
    mkdirSync(SHOTS, { recursive: true });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Root in a container: Chromium's sandbox needs user namespaces it may not have.
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
      env: { ...process.env, TMPDIR: tempDir('svc-chromium-') },
    });
    const context = await browser.newContext({ locale: 'de-DE', timezoneId: 'Europe/Berlin' });
    page = await context.newPage();
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rx?.close();
    await h?.close();
  });

  /**
   * Every form of the page that changes something (method POST) is sent once (assets/dashboard.js):
   * a copy of each form, hidden, gets two submit events as a double click would give; the second
   * must be cancelled and the copy's buttons disabled. Synthetic submit events send nothing, and the
   * copy is removed, so the page is as it was. Answers the actions of the forms that are not.
   */
  async function unguardedForms(): Promise<string[]> {
    const { unguarded, swept } = await page.evaluate(async () => {
      const unguarded: string[] = [];
      const swept: string[] = [];
      for (const form of Array.from(document.querySelectorAll('form'))) {
        if (form.method !== 'post') continue;
        const copy = form.cloneNode(true) as HTMLFormElement;
        copy.hidden = true;
        document.body.append(copy);
        const first = new Event('submit', { bubbles: true, cancelable: true });
        const second = new Event('submit', { bubbles: true, cancelable: true });
        copy.dispatchEvent(first);
        copy.dispatchEvent(second);
        await new Promise((resolve) => setTimeout(resolve, 0));
        const enabled = Array.from(copy.querySelectorAll<HTMLButtonElement>('button, input[type="submit"]')).filter((b) => !b.disabled);
        const action = new URL(form.action).pathname;
        swept.push(action);
        if (first.defaultPrevented || !second.defaultPrevented || enabled.length > 0) unguarded.push(action);
        copy.remove();
      }
      return { unguarded, swept };
    });
    for (const action of swept) sweptActions.add(action.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, ':id'));
    return unguarded;
  }

  /** Signs in from a fresh session, as a person would, and waits for the first page. */
  async function signIn(email: string) {
    await page.context().clearCookies();
    await page.goto(`${base}/dashboard/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('correct-horse');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/dashboard/apps`);
  }

  /** Waits for the page, checks it with axe-core, keeps a screenshot. */
  async function check(name: string) {
    await page.waitForLoadState('load');
    // Evaluated through the DevTools protocol, not a <script>: the page's CSP stays as served.
    await page.evaluate(axeSource);
    const { violations, passes } = await page.evaluate(async () => {
      type Rule = { id: string; impact: string; help: string; nodes: { target: unknown }[] };
      const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Rule[]; passes: Rule[] }> } }).axe;
      const result = await axe.run(document, { resultTypes: ['violations'] });
      return {
        violations: result.violations.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`),
        passes: result.passes.length,
      };
    });
    expect(passes, 'axe-core ran its rules').toBeGreaterThan(10);
    expect(await unguardedForms(), `POST forms on ${name} that a double click would send twice`).toEqual([]);
    await page.screenshot({ path: join(SHOTS, `${String(visited.length + 1).padStart(2, '0')}-${name}.png`), fullPage: true });
    visited.push(name);
    expect(violations, `axe-core on ${name} (${page.url()})`).toEqual([]);
    expect(cspViolations, `CSP violations on ${name}`).toEqual([]);
  }

  it('a developer signs in, creates an app, sees a failed delivery and redelivers it, and replays a function run', async () => {
    const partner = await signupPartner(h);
    const merchant = await signupMerchant(h);

    await page.goto(`${base}/dashboard/apps`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    await check('login');
    await page.getByLabel('Email').fill(partner.email);
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Invalid email or password');
    await check('login-refused');
    await page.getByLabel('Password').fill('correct-horse');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/dashboard/apps`);
    await expect.poll(() => page.getByRole('heading', { level: 2 }).first().textContent()).toBe('No apps yet');
    await check('apps-empty');

    await page.getByRole('link', { name: 'Create your first app' }).click();
    await page.waitForURL(`${base}/dashboard/apps/new`);
    await check('app-new');
    const name = `Browser App ${unique()}`;
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('App URL').fill('not a url');
    await page.getByLabel('read_orders').check();
    await page.getByRole('button', { name: 'Create the app' }).click();
    await expect.poll(() => page.locator('#appUrl-error').textContent()).toMatch(/appUrl/);
    await check('app-new-refused');
    await page.getByLabel('App URL').fill('https://app.example.com');
    await page.getByLabel('Webhooks').fill(`orders/create ${rx.url}/fail`);
    await page.getByLabel('Functions (JSON)').fill(JSON.stringify([{ handle: 'v', title: 'Validate', target: 'cart.validations.generate.run', expression: '{"operations": []}' }]));
    await page.getByRole('button', { name: 'Create the app' }).click();
    await page.waitForURL(/\/dashboard\/apps\/[0-9a-f-]+\?created=1$/);
    const appId = /apps\/([0-9a-f-]+)/.exec(page.url())![1];
    await expect.poll(() => page.getByRole('status').textContent()).toBe('App created.');
    // Dates in the viewer's locale (de-DE): the script rewrote the UTC text.
    await expect.poll(() => page.locator('time').first().textContent()).not.toContain('UTC');
    await page.getByText('Show the client secret').click();
    await check('app');

    // The app is installed on a store (its manifest webhook subscribed) and the store emits a topic.
    const { rows } = await h.db.query<{ client_id: string }>('SELECT client_id FROM apps WHERE id = $1', [appId]);
    const clientSecret = await page.locator('#client-secret').textContent();
    await installApp(h, merchant, { appId, clientId: rows[0].client_id, clientSecret: clientSecret!, handle: '', developerToken: '' });
    await emitEvent(h, merchant.storeId, 'orders/create', { id: 7, name: '#1007' });
    await runDeliveries(h);

    await page.getByRole('link', { name: 'Webhook deliveries' }).click();
    await page.waitForURL(`${base}/dashboard/apps/${appId}/deliveries`);
    await check('deliveries');
    // The filter refreshes the table in place (htmx) and keeps the address in step.
    await page.getByLabel('Status').selectOption('retrying');
    await page.waitForURL(/status=retrying/);
    await expect.poll(() => page.locator('#log tbody tr').count()).toBe(1);
    await check('deliveries-filtered');
    await page.getByRole('link', { name: 'orders/create' }).click();
    await page.waitForURL(/\/deliveries\/[0-9a-f-]+$/);
    await expect.poll(() => page.locator('main').textContent()).toContain('answer for /fail');
    await check('delivery');
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await page.waitForURL(/\?redelivered=1$/);
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Redelivery queued');
    await runDeliveries(h);
    await page.reload();
    await expect.poll(() => page.locator('table tbody tr').count()).toBe(2); // two attempts
    await check('delivery-redelivered');

    // A recorded run of the app's function, opened and replayed with a new expression.
    const functionId = (await h.req('GET', '/functions', { token: merchant.token })).json().data.functions.find((f: { appId: string }) => f.appId === appId).functionId;
    const runId = uuidv7();
    await insertRuns(h.deps.db, [{
      id: runId, appId, storeId: merchant.storeId, functionId, functionHandle: 'v', target: 'cart.validations.generate.run', status: 'success',
      errorType: null, errorMessage: null, input: { n: 2 }, inputBytes: 7, output: { operations: [] }, outputBytes: 17, durationMs: 2, checkoutId: null,
      checkoutTokenSealed: null, createdAt: new Date(h.clock.nowMs()),
    }]);
    await page.goto(`${base}/dashboard/apps/${appId}`);
    await page.getByRole('link', { name: 'Function runs' }).click();
    await page.waitForURL(`${base}/dashboard/apps/${appId}/runs`);
    await check('runs');
    await page.getByRole('link', { name: 'v', exact: true }).click();
    await page.waitForURL(new RegExp(`/runs/v/${runId}$`));
    await check('run');
    await page.getByLabel('Expression (CEL)').fill('{"operations": [{"validationAdd": {"errors": [{"message": "n is " + string(int(input.n)), "target": "cart"}]}}]}');
    await page.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => page.locator('#replay-outcome').textContent()).toContain('n is 2');
    await check('run-replayed');

    await page.getByRole('link', { name: 'Earnings' }).click();
    await page.waitForURL(`${base}/dashboard/earnings`);
    await check('earnings');
    await page.getByRole('link', { name: 'Set a payout method' }).click();
    await page.getByLabel('PayPal', { exact: true }).check();
    await page.getByLabel('PayPal email').fill('not-an-email');
    await page.getByRole('button', { name: 'Save the payout method' }).click();
    await expect.poll(() => page.locator('#email-error').textContent()).toContain('email');
    await check('payout-method-refused');
    await page.getByLabel('PayPal email').fill('pat@example.com');
    await page.getByRole('button', { name: 'Save the payout method' }).click();
    await page.waitForURL(/\/dashboard\/earnings\?saved=1$/);
    await check('earnings-method-saved');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/dashboard\/login\?signed_out=1$/);
    await check('signed-out');
    // Nothing of the pages seen outlives sign-out in the tab: htmx keeps no copy of the pages its
    // filters pushed to the history (the deliveries filter above did), where a shared computer's
    // next user could read them (found in review: customers' emails and the CSRF token).
    expect(await page.evaluate(() => sessionStorage.getItem('htmx-history-cache'))).toBeNull();
    expect(visited.length).toBeGreaterThanOrEqual(17);
  }, 180_000);

  it('a merchant installs and uninstalls an app, deactivates a function, files a GDPR request, saves the address and manages a shipping zone', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const created = await h.req('POST', '/apps/developer/apps', {
      token: partner.token,
      body: {
        name: `Shop Helper ${unique()}`, appUrl: 'https://helper.example.com', scopes: ['read_products'],
        extensions: { functions: [{ handle: 'hide', title: 'Hide slow options', target: 'cart.delivery-options.transform.run', expression: '{"operations": []}' }] },
      },
    });
    const app = created.json().data.app;
    await signIn(merchant.email);
    await page.getByRole('link', { name: 'Installed apps' }).click();
    await page.waitForURL(`${base}/dashboard/store/apps`);
    await check('store-apps-empty');

    await page.getByLabel('Client id').fill(app.clientId);
    await page.getByRole('button', { name: 'Install' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Continue the install at the app');
    await check('store-install');
    // The merchant would follow the link to the app, which exchanges the code (C4.4).
    const handoff = new URL((await page.locator('#continue').getAttribute('href'))!);
    const token = await h.req('POST', '/apps/oauth/token', {
      body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'authorization_code', code: handoff.searchParams.get('code'), state: handoff.searchParams.get('state') },
    });
    expect(token.statusCode).toBe(200);

    await page.getByRole('link', { name: 'Functions' }).click();
    await page.waitForURL(`${base}/dashboard/store/functions`);
    await check('store-functions');
    const toggle = () => page.locator('tr', { hasText: 'Hide slow options' }).getByRole('button');
    // A function installed inactive is activated first, so that it can be deactivated here.
    if ((await toggle().textContent())!.trim().startsWith('Activate')) {
      await toggle().click();
      await expect.poll(async () => (await toggle().textContent())!.trim()).toMatch(/^Deactivate/);
    }
    await toggle().click();
    await expect.poll(async () => (await toggle().textContent())!.trim()).toMatch(/^Activate/);
    expect((await h.req('GET', '/functions', { token: merchant.token })).json().data.functions[0].active).toBe(false);
    await check('store-functions-deactivated');
    await page.getByRole('link', { name: 'Hide slow options' }).click();
    await check('store-function');

    await page.getByRole('link', { name: 'GDPR requests' }).click();
    await page.waitForURL(`${base}/dashboard/store/gdpr`);
    await check('store-gdpr-empty');
    await page.locator('#dr-email').fill('buyer@example.com');
    await page.getByRole('button', { name: 'Request the data' }).click();
    await page.waitForURL(/\/dashboard\/store\/gdpr\/[0-9a-f-]+\?created=1$/);
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Request filed');
    await check('store-gdpr-request');
    await page.getByRole('link', { name: 'GDPR requests' }).first().click();
    await page.waitForURL(`${base}/dashboard/store/gdpr`);
    await check('store-gdpr');

    await page.getByRole('link', { name: 'Installed apps' }).click();
    await page.getByRole('link', { name: `Uninstall ${app.name}` }).click();
    await page.waitForURL(/\/uninstall$/);
    await check('store-uninstall');
    await page.getByRole('button', { name: 'Uninstall' }).click();
    await page.waitForURL(/\?uninstalled=1$/);
    await expect.poll(() => page.getByRole('status').textContent()).toContain('App uninstalled');
    await check('store-apps-uninstalled');
    expect((await h.req('GET', '/apps/installations', { token: merchant.token })).json().data.installations[0].status).toBe('uninstalled');

    await page.getByRole('link', { name: 'Notifications' }).click();
    await page.waitForURL(`${base}/dashboard/store/notifications`);
    await check('store-notifications');

    await page.getByRole('link', { name: 'Store address' }).click();
    await page.waitForURL(`${base}/dashboard/store/address`);
    await check('store-address');
    await page.getByLabel('Street address').fill('1 Main St');
    await page.getByLabel('Country').fill('ZZ');
    await page.getByRole('button', { name: 'Save the address' }).click();
    await expect.poll(() => page.locator('#country-error').textContent()).toContain('ISO 3166-1');
    await check('store-address-refused');
    await page.getByLabel('Country').fill('ca');
    await page.getByRole('button', { name: 'Save the address' }).click();
    await page.waitForURL(/\/dashboard\/store\/address\?saved=1$/);
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Address saved.');
    expect((await h.req('GET', '/stores/address', { token: merchant.token })).json().data.address.country).toBe('CA');

    await page.getByRole('link', { name: 'Shipping zones' }).click();
    await page.waitForURL(`${base}/dashboard/store/shipping-zones`);
    await check('store-zones-empty');
    await page.getByRole('link', { name: 'Create a shipping zone' }).click();
    await page.waitForURL(`${base}/dashboard/store/shipping-zones/new`);
    await page.getByLabel('Name', { exact: true }).fill('Standard');
    await page.getByLabel('Countries').fill('US, XX');
    await page.getByRole('button', { name: 'Create the zone' }).click();
    await expect.poll(() => page.locator('#countries-error').textContent()).toContain('"XX"');
    await check('store-zone-refused');
    await page.getByLabel('Countries').fill('US, CA');
    await page.getByRole('button', { name: 'Create the zone' }).click();
    await page.waitForURL(/\/dashboard\/store\/shipping-zones\?saved=1$/);
    await check('store-zones');
    await page.getByRole('link', { name: 'Standard', exact: true }).click();
    await check('store-zone');
    await page.getByRole('link', { name: 'Delete this zone' }).click();
    await page.waitForURL(/\/delete$/);
    await check('store-zone-delete');
    await page.getByRole('button', { name: 'Delete the zone' }).click();
    await page.waitForURL(/\?deleted=1$/);
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Shipping zone deleted.');
  }, 180_000);
  it('a double click on a form that creates something creates one record; every POST form of the dashboard is swept', async () => {
    const merchant = await signupMerchant(h); // a merchant sees the developer pages and the store pages
    await signIn(merchant.email);

    // Each POST reaches the service at once, but its answer comes back slowly: the page stays on
    // screen for a while after the first click, as on a slow network, and a second click in that
    // time would be a second submission. A person's double click: the second click 150 ms after
    // the first, once the first request has left (clicks within one task only replace the planned
    // navigation). The mouse clicks where the button is, whether it is disabled or not, as a person does.
    const doubleClick = async (button: ReturnType<Page['getByRole']>) => {
      await button.scrollIntoViewIfNeeded();
      const box = (await button.boundingBox())!;
      const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
      await page.mouse.click(x, y);
      await new Promise((resolve) => setTimeout(resolve, 150));
      await page.mouse.click(x, y);
    };
    const posts: string[] = [];
    await page.route(`${base}/dashboard/**`, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      posts.push(new URL(route.request().url()).pathname);
      const response = await route.fetch({ maxRedirects: 0 });
      await new Promise((resolve) => setTimeout(resolve, 600));
      await route.fulfill({ response });
    });
    try {
      await page.goto(`${base}/dashboard/apps/new`);
      const name = `Double Click ${unique()}`;
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByLabel('App URL').fill('https://double.example.com');
      await doubleClick(page.getByRole('button', { name: 'Create the app' }));
      await new Promise((resolve) => setTimeout(resolve, 1500)); // a second submission would have landed by now
      expect(posts.filter((p) => p === '/dashboard/apps')).toHaveLength(1);
      const apps = await h.db.query<{ id: string }>('SELECT id FROM apps WHERE name = $1', [name]);
      expect(apps.rows.length).toBe(1);
      await page.waitForURL(/\/dashboard\/apps\/[0-9a-f-]+\?created=1$/);
      await expect.poll(() => page.getByRole('status').textContent()).toBe('App created.');
      const appId = apps.rows[0].id;

      await page.goto(`${base}/dashboard/store/shipping-zones/new`);
      await page.getByLabel('Name', { exact: true }).fill('Twice clicked');
      await page.getByLabel('Countries').fill('US');
      await doubleClick(page.getByRole('button', { name: 'Create the zone' }));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(posts.filter((p) => p === '/dashboard/store/shipping-zones')).toHaveLength(1);
      const zones = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM shipping_zones WHERE store_id = $1', [merchant.storeId]);
      expect(zones.rows[0].n).toBe(1);
      await page.waitForURL(/\/dashboard\/store\/shipping-zones\?saved=1$/);

      // The forms the other tests do not reach, for the sweep below.
      await page.goto(`${base}/dashboard/apps/${appId}/edit`);
      await check('app-edit');
      await page.goto(`${base}/dashboard/apps/${appId}/rotate-secret`);
      await check('rotate-secret');
      // The Test page's two forms, each sent once and its outcome checked as a page of its own.
      await page.goto(`${base}/dashboard/apps/${appId}`);
      await page.getByRole('link', { name: 'Test', exact: true }).click();
      await page.waitForURL(`${base}/dashboard/apps/${appId}/test`);
      await check('app-test');
      await page.getByLabel('Topic').selectOption('orders/paid');
      await page.locator('#webhook-address').fill(`${rx.url}/hook`);
      await page.getByRole('button', { name: 'Send the test webhook' }).click();
      await expect.poll(() => page.locator('#webhook-outcome').textContent()).toContain('answer for /hook');
      await check('app-test-webhook');
      await page.locator('#rates-address').fill(`${rx.url}/rates`);
      await page.getByRole('button', { name: 'Test shipping rates' }).click();
      await expect.poll(() => page.locator('#rates-outcome').textContent()).toContain('malformed_reply');
      await check('app-test-rates');
    } finally {
      await page.unrouteAll({ behavior: 'wait' });
    }

    // Every POST route of the dashboard had its form swept by `check` in one of the tests of this file.
    expect([...sweptActions].sort()).toEqual([
      '/dashboard/apps', '/dashboard/apps/:id', '/dashboard/apps/:id/deliveries/:id/redeliver', '/dashboard/apps/:id/rotate-secret',
      '/dashboard/apps/:id/runs/v/:id/replay', '/dashboard/apps/:id/test/shipping-rates', '/dashboard/apps/:id/test/webhook', '/dashboard/earnings/payout-method', '/dashboard/login', '/dashboard/logout',
      '/dashboard/store/address', '/dashboard/store/apps/:id/uninstall', '/dashboard/store/apps/install',
      '/dashboard/store/functions/:id/active', '/dashboard/store/functions/:id/configuration', '/dashboard/store/gdpr/customer-redact',
      '/dashboard/store/gdpr/data-request', '/dashboard/store/gdpr/shop-redact', '/dashboard/store/shipping-zones',
      '/dashboard/store/shipping-zones/:id', '/dashboard/store/shipping-zones/:id/delete',
    ].sort());
  }, 120_000);
});
