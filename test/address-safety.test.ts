// Address safety (C8.9; issue 10 item 5), swept: every form of fixtures/addresses.ts, as an IP
// literal and as a name whose DNS answer is that address, is refused at each of the places an
// address is accepted (app URLs, redirect URLs, GDPR URLs and manifest webhooks of C3.1/C3.2, API
// subscriptions of C6.4, store webhooks of C6.5, test deliveries of issue 14), and a delivery to it is not sent and fails with
// `blocked_address`, whatever the delivery's source (subscription, manifest, store, GDPR).
//
// DNS is replaced for names under `.rebind.test` (see the mock below): such a name answers the
// address it spells, so the resolver path is checked at save time and at connect time without a
// DNS server, and a name saved while it pointed elsewhere is caught when it is connected to.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { storeWithApp } from './helpers/actors.js';
import { deliveriesOfStore, emitEvent, runDeliveries, WEBHOOK_SCOPES } from './fixtures/webhook-setup.js';
import { PRIVATE_HOSTS, PUBLIC_HOSTS, PUBLIC_URL, privateUrl } from './fixtures/addresses.js';
import { gdprDispatcher } from '../src/gdpr/gdpr.dispatch.js';
import { isBlockedHost, isBlockedIp } from '../src/net/address-safety.js';

/** `a-b-c-d.v4.rebind.test` answers a.b.c.d, `0-0-0-0-0-ffff-7f00-1.v6.rebind.test` ::ffff:7f00:1 (test/helpers/rebind-dns.ts). */
vi.mock('node:dns', async (original) => (await import('./helpers/rebind-dns.js')).rebindDns(await original()));
vi.mock('node:dns/promises', async (original) => (await import('./helpers/rebind-dns.js')).rebindDnsPromises(await original()));

/** The address a URL host names, in the form a DNS answer carries it. */
const addressOf = (host: string) => new URL(`https://${host}/`).hostname.replace(/^\[|\]$/g, '');

/** A name under `.rebind.test` whose DNS answer is `address`. */
function rebindName(address: string): string {
  if (!address.includes(':')) return `${address.replace(/\./g, '-')}.v4.rebind.test`;
  // Expand `::` so the name has no empty label.
  const [head, tail = ''] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const parts = address.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return `${parts.join('-')}.v6.rebind.test`;
}

const isLiteral = (host: string) => /^\[|^[0-9x.]+$/i.test(host);

/** Every form: the literal, and for each distinct IP a name that resolves to it. */
const FORMS: { host: string; what: string }[] = [...PRIVATE_HOSTS.map(([host, what]) => ({ host, what }))];
for (const [host, what] of PRIVATE_HOSTS.filter(([h]) => isLiteral(h))) {
  const name = rebindName(addressOf(host));
  if (!FORMS.some((f) => f.host === name)) FORMS.push({ host: name, what: `a name resolving to ${what}` });
}
const PUBLIC_FORMS = [...PUBLIC_HOSTS, ...PUBLIC_HOSTS.map((host) => rebindName(addressOf(host)))];

const REFUSED = 'points at a private address';

let strict: Harness;
beforeAll(async () => {
  strict = await createWebhookHarness({ SVC_ALLOW_PRIVATE_WEBHOOKS: '0' });
});
afterAll(() => strict?.close());

describe('the classification (ipaddr.js ranges; IPv4 carried in IPv6 judged as IPv4)', () => {
  it('refuses every private form as a URL host, and every IP form as a resolved address', () => {
    expect(PRIVATE_HOSTS.filter(([host]) => !isBlockedHost(new URL(privateUrl(host)).hostname))).toEqual([]);
    const answers = PRIVATE_HOSTS.filter(([host]) => isLiteral(host)).map(([host]) => addressOf(host));
    // DNS gives mapped addresses in dotted form too (`::ffff:127.0.0.1`).
    answers.push('::ffff:127.0.0.1', '::127.0.0.1', '64:ff9b::169.254.169.254', 'fe80::1%eth0');
    expect(answers.filter((a) => !isBlockedIp(a))).toEqual([]);
  });

  it('lets public addresses through, also in the IPv6 forms that carry a public IPv4 address', () => {
    expect(PUBLIC_HOSTS.filter((h) => isBlockedHost(new URL(`https://${h}/`).hostname))).toEqual([]);
    expect(['1.1.1.1', '2606:4700:4700::1111', '::ffff:1.1.1.1', '64:ff9b::1.1.1.1', '2002:101:101::'].filter(isBlockedIp)).toEqual([]);
    expect(['', 'example.com', '1.1.1', '::ffff:1.1.1.1.1'].filter((a) => !isBlockedIp(a))).toEqual([]);
  });
});

interface Res {
  statusCode: number;
  json(): any;
}

/** The store, partner and installed app the registration sweep saves addresses for. */
let s: Awaited<ReturnType<typeof storeWithApp>>;

/**
 * Each place an address is saved, with the request that saves `url` there and the refusal it must
 * get (C8.9: 400 envelope for app fields, 422 for subscriptions).
 */
const PLACES = (() => {
  const createApp = (body: Record<string, unknown>) =>
    strict.req('POST', '/apps/developer/apps', { token: s.partner.token, body: { name: `Sweep ${randomUUID()}`, appUrl: PUBLIC_URL, scopes: ['read_orders'], ...body } });
  const envelope = (status: number, message: string) => ({ status, state: 'error', message, data: null, count: null, pagination: null });
  return [
    { place: 'appUrl (C3.1 create)', save: (url: string) => createApp({ appUrl: url }), ok: 201, refused: [400, envelope(400, `appUrl ${REFUSED}`)] },
    {
      place: 'appUrl (C3.2 update)',
      save: (url: string) => strict.req('PATCH', `/apps/developer/apps/${s.app.appId}`, { token: s.partner.token, body: { appUrl: url } }),
      ok: 200, refused: [400, envelope(400, `appUrl ${REFUSED}`)],
    },
    { place: 'redirectUrls', save: (url: string) => createApp({ redirectUrls: [`${PUBLIC_URL}/cb`, url] }), ok: 201, refused: [400, envelope(400, `redirectUrls[1] ${REFUSED}`)] },
    {
      place: 'gdprUrls',
      save: (url: string) => createApp({ gdprUrls: { customerDataRequest: `${PUBLIC_URL}/gdpr`, customerRedact: url } }),
      ok: 201, refused: [400, envelope(400, `gdprUrls.customerRedact ${REFUSED}`)],
    },
    {
      place: 'manifest webhooks (extensions.webhooks)',
      save: (url: string) => createApp({ extensions: { webhooks: [{ topic: 'orders/create', uri: url }] } }),
      ok: 201, refused: [400, envelope(400, `extensions.webhooks[0].uri ${REFUSED}`)],
    },
    {
      place: 'App API subscription (C6.4)',
      save: (url: string) => strict.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic: 'orders/create', address: url } } }),
      ok: 201, refused: [422, { errors: { address: [REFUSED] } }],
    },
    {
      place: 'store webhook (C6.5)',
      save: (url: string) => strict.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'orders/create', address: url } }),
      ok: 201, refused: [422, envelope(422, `address ${REFUSED}`)],
    },
  ] as const;
})();

describe('C8.9 at registration: every form is refused at every place an address is saved', () => {
  beforeAll(async () => {
    // Enterprise tier: the sweep makes over a hundred App API requests in a row.
    s = await storeWithApp(strict, { scopes: WEBHOOK_SCOPES, tier: 'enterprise', appUrl: PUBLIC_URL });
  });

  it.each(PLACES.map((p) => [p.place, p] as const))('%s: refused with the documented error', async (place, { save, refused }) => {
    const wrong: string[] = [];
    for (const { host, what } of FORMS) {
      const res: Res = await save(privateUrl(host));
      const [status, body] = refused;
      if (res.statusCode !== status || JSON.stringify(res.json()) !== JSON.stringify(body)) wrong.push(`${host} (${what}): ${res.statusCode} ${JSON.stringify(res.json())}`);
    }
    expect(wrong, place).toEqual([]);
  }, 60_000);

  it('nothing private was stored anywhere', async () => {
    const { rows } = await strict.db.query<{ address: string }>(
      `SELECT address FROM webhook_subscriptions WHERE store_id = $1
       UNION ALL SELECT address FROM store_webhooks WHERE store_id = $1
       UNION ALL SELECT app_url FROM apps WHERE developer_id = $2
       UNION ALL SELECT jsonb_array_elements_text(redirect_urls) FROM apps WHERE developer_id = $2
       UNION ALL SELECT value FROM apps, jsonb_each_text(coalesce(gdpr_urls, '{}'::jsonb)) WHERE developer_id = $2
       UNION ALL SELECT w->>'uri' FROM apps, jsonb_array_elements(coalesce(extensions->'webhooks', '[]'::jsonb)) w WHERE developer_id = $2`,
      [s.merchant.storeId, s.partner.userId],
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((r) => !r.address.startsWith(PUBLIC_URL))).toEqual([]);
  });

  // Not a place an address is saved, so not in PLACES (an accepted public address would be sent to).
  it('test deliveries (issue 14): refused with 422 before anything is sent or recorded', async () => {
    const refused = { status: 422, state: 'error', message: `address ${REFUSED}`, data: null, count: null, pagination: null };
    const wrong: string[] = [];
    for (const { host, what } of FORMS) {
      const res: Res = await strict.req('POST', `/apps/developer/${s.app.appId}/webhooks/test`, {
        token: s.partner.token, body: { topic: 'orders/create', address: privateUrl(host) },
      });
      if (res.statusCode !== 422 || JSON.stringify(res.json()) !== JSON.stringify(refused)) wrong.push(`${host} (${what}): ${res.statusCode} ${JSON.stringify(res.json())}`);
    }
    expect(wrong).toEqual([]);
    const { rows } = await strict.db.query(`SELECT 1 FROM webhook_deliveries WHERE app_id = $1 AND source = 'test'`, [s.app.appId]);
    expect(rows).toEqual([]);
  }, 60_000);

  it.each(PLACES.map((p) => [p.place, p] as const))('%s: public addresses, literal or resolved, are accepted', async (place, { save, ok }) => {
    const wrong: string[] = [];
    for (const [n, host] of PUBLIC_FORMS.entries()) {
      const res: Res = await save(privateUrl(host, `/ok-${n}`));
      if (res.statusCode !== ok) wrong.push(`${host}: ${res.statusCode} ${JSON.stringify(res.json())}`);
    }
    expect(wrong, place).toEqual([]);
  }, 60_000);
});

describe('C8.9 at send time: a delivery to any form is not sent and fails with blocked_address', () => {
  // Saved while private addresses were allowed, or a name that resolved elsewhere then: the rows
  // are written directly, as the API now refuses them. The addresses carry no port: a delivery that
  // got through would try port 443 and fail otherwise (refused or timed out), never as blocked.
  it('API subscriptions, manifest webhooks and store webhooks', async () => {
    const s = await storeWithApp(strict, { scopes: WEBHOOK_SCOPES, tier: 'enterprise', appUrl: PUBLIC_URL });
    for (const { host } of FORMS) {
      await strict.db.query(
        `INSERT INTO webhook_subscriptions (id, installation_id, app_id, store_id, topic, address, secret_enc, api_version, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, $2, $3, 'orders/create', $4, $5, '2026-06', now(), now())`,
        [s.installationId, s.app.appId, s.merchant.storeId, privateUrl(host, '/sub'), strict.deps.secrets.seal('secret')],
      );
      await strict.db.query(
        `INSERT INTO store_webhooks (id, store_id, topic, address, secret_enc, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, 'orders/create', $2, $3, now(), now())`,
        [s.merchant.storeId, privateUrl(host, '/store'), strict.deps.secrets.seal('secret')],
      );
    }
    const manifest = { webhooks: FORMS.map(({ host }) => ({ topic: 'orders/create', uri: privateUrl(host, '/manifest') })) };
    await strict.db.query('UPDATE apps SET extensions = $2::jsonb WHERE id = $1', [s.app.appId, JSON.stringify(manifest)]);

    await emitEvent(strict, s.merchant.storeId, 'orders/create', { id: 1 });
    let processed = 0;
    for (let n; (n = await runDeliveries(strict)) > 0; ) processed += n;
    expect(processed).toBe(3 * FORMS.length);
    const rows = await deliveriesOfStore(strict, s.merchant.storeId);
    expect(rows.map((r) => r.source).sort()).toEqual(['manifest', 'store', 'subscription'].flatMap((src) => FORMS.map(() => src)));
    const wrong = rows.filter((r) => r.status !== 'failed' || r.attempt_count !== 1 || r.last_error !== 'blocked_address');
    expect(wrong.map((r) => `${r.source} ${r.address}: ${r.status} ${r.last_error}`)).toEqual([]);
    const { rows: attempts } = await strict.db.query<{ error: string; response_status: number | null }>(
      'SELECT a.error, a.response_status FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.store_id = $1',
      [s.merchant.storeId],
    );
    expect(attempts).toHaveLength(3 * FORMS.length);
    expect(attempts.every((a) => a.error === 'blocked_address' && a.response_status === null)).toBe(true);
  }, 60_000);

  it('GDPR webhooks (C9.1): not sent, failed with blocked_address, and the request still dispatched', async () => {
    const s = await storeWithApp(strict, { scopes: ['read_shop', 'read_customers'], tier: 'enterprise', appUrl: PUBLIC_URL });
    const requestIds: string[] = [];
    for (const { host } of FORMS) {
      await strict.db.query('UPDATE apps SET gdpr_urls = $2::jsonb WHERE id = $1', [s.app.appId, JSON.stringify({ shopRedact: privateUrl(host, '/gdpr') })]);
      const res = await strict.req('POST', '/apps/gdpr/shop-redact', { token: s.merchant.token });
      expect(res.statusCode, res.body).toBe(201);
      requestIds.push(res.json().data.requestId);
      // Sent before the next change of gdpr_urls (the address is read when the request is made).
      await gdprDispatcher(strict.deps).settle();
    }
    const rows = (await deliveriesOfStore(strict, s.merchant.storeId)).filter((r) => r.source === 'gdpr');
    expect(rows.map((r) => r.address).sort()).toEqual(FORMS.map(({ host }) => privateUrl(host, '/gdpr')).sort());
    const wrong = rows.filter((r) => r.status !== 'failed' || r.last_error !== 'blocked_address');
    expect(wrong.map((r) => `${r.address}: ${r.status} ${r.last_error}`)).toEqual([]);
    const { rows: requests } = await strict.db.query<{ status: string }>(
      'SELECT status FROM gdpr_requests WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)',
      [JSON.stringify(requestIds)],
    );
    expect(requests.map((r) => r.status)).toEqual(requestIds.map(() => 'dispatched'));
  }, 60_000);
});
