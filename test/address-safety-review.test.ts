// Review finding on address safety (C8.9 refuses "cloud-metadata" addresses): Azure's platform
// address 168.63.129.16 (WireServer) is public unicast, so the range rule let it through, as a
// literal, in the IPv6 forms that carry it, and as a name resolving to it. Checked here at the
// classification, at save time (an App API subscription, C6.4, with private addresses not allowed)
// and at send time (a subscription saved earlier fails with `blocked_address`). The other places an
// address is saved share the same check (checkTargetUrl); test/address-safety.test.ts sweeps them.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { storeWithApp } from './helpers/actors.js';
import { deliveriesOfStore, emitEvent, runDeliveries, WEBHOOK_SCOPES } from './fixtures/webhook-setup.js';
import { PUBLIC_URL } from './fixtures/addresses.js';
import { isBlockedHost, isBlockedIp, parseTargetUrl } from '../src/net/address-safety.js';

/** `a-b-c-d.v4.rebind.test` answers a.b.c.d (test/helpers/rebind-dns.ts). */
vi.mock('node:dns', async (original) => (await import('./helpers/rebind-dns.js')).rebindDns(await original()));
vi.mock('node:dns/promises', async (original) => (await import('./helpers/rebind-dns.js')).rebindDnsPromises(await original()));

const AZURE = '168.63.129.16';
/** The URL hosts that reach it: the literal and the IPv6 forms judged by their IPv4 address. */
const AZURE_HOSTS = [AZURE, `[::ffff:${AZURE}]`, '[::ffff:a83f:8110]', `[64:ff9b::${AZURE}]`, '[2002:a83f:8110::]', '2822734096', '168.63.129.16.'];
const AZURE_NAME = '168-63-129-16.v4.rebind.test';
const REFUSED = 'points at a private address';

let strict: Harness;
beforeAll(async () => {
  strict = await createWebhookHarness({ SVC_ALLOW_PRIVATE_WEBHOOKS: '0' });
});
afterAll(() => strict?.close());

describe('C8.9 cloud metadata: Azure 168.63.129.16 is refused', () => {
  it('the classification: the address and every form carrying it are blocked; its neighbours are not', () => {
    expect(isBlockedIp(AZURE)).toBe(true);
    expect(isBlockedIp(`::ffff:${AZURE}`)).toBe(true); // a DNS answer in mapped dotted form
    expect(isBlockedIp(`64:ff9b::${AZURE}`)).toBe(true);
    expect(AZURE_HOSTS.filter((host) => !isBlockedHost(new URL(`https://${host}/hook`).hostname))).toEqual([]);
    // Only that address: the rest of 168.63.0.0/16 is ordinary public space.
    expect(['168.63.129.15', '168.63.129.17', '168.63.128.16', '1.1.1.1'].filter(isBlockedIp)).toEqual([]);
  });

  it('at save time: an App API subscription to it, literal or a name resolving to it, is the 422 refusal; nothing is stored', async () => {
    const s = await storeWithApp(strict, { scopes: WEBHOOK_SCOPES, tier: 'enterprise', appUrl: PUBLIC_URL });
    const wrong: string[] = [];
    for (const host of [...AZURE_HOSTS, AZURE_NAME]) {
      const res = await strict.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic: 'orders/create', address: `https://${host}/hook` } } });
      if (res.statusCode !== 422 || JSON.stringify(res.json()) !== JSON.stringify({ errors: { address: [REFUSED] } })) wrong.push(`${host}: ${res.statusCode} ${res.body}`);
    }
    expect(wrong).toEqual([]);
    const { rows } = await strict.db.query('SELECT address FROM webhook_subscriptions WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows).toEqual([]);
    // A public address is still taken (the refusal above is not the guard refusing everything).
    const ok = await strict.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic: 'orders/create', address: `${PUBLIC_URL}/hook` } } });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('at send time: a subscription saved before the rule fails with blocked_address, nothing sent', async () => {
    const s = await storeWithApp(strict, { scopes: WEBHOOK_SCOPES, tier: 'enterprise', appUrl: PUBLIC_URL });
    // No port: a delivery that got through would try 443 and fail otherwise, never as blocked.
    for (const host of [AZURE, AZURE_NAME]) {
      await strict.db.query(
        `INSERT INTO webhook_subscriptions (id, installation_id, app_id, store_id, topic, address, secret_enc, api_version, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, $2, $3, 'orders/create', $4, $5, '2026-06', now(), now())`,
        [s.installationId, s.app.appId, s.merchant.storeId, `https://${host}/hook`, strict.deps.secrets.seal('secret')],
      );
    }
    await emitEvent(strict, s.merchant.storeId, 'orders/create', { id: 1 });
    for (let n; (n = await runDeliveries(strict)) > 0; );
    const rows = await deliveriesOfStore(strict, s.merchant.storeId);
    expect(rows.map((r) => `${r.address} ${r.status} ${r.last_error}`).sort()).toEqual([
      `https://${AZURE_NAME}/hook failed blocked_address`,
      `https://${AZURE}/hook failed blocked_address`,
    ].sort());
  }, 60_000);
});

describe('C8.9 an address with port 0 is refused (it was sent to the default port, another address than the one saved)', () => {
  it('every form, private addresses allowed or not; port 1 and 65535 are addresses', () => {
    for (const allowPrivate of [false, true]) {
      for (const url of ['https://8.8.8.8:0/x', 'https://example.com:0', 'https://example.com:00/x', 'https://[2001:4860::8888]:0/x']) {
        expect(parseTargetUrl(url, allowPrivate), url).toEqual({ ok: false, reason: 'must not use port 0' });
      }
      for (const url of ['https://example.com:1/x', 'https://example.com:65535/x']) expect(parseTargetUrl(url, allowPrivate).ok, url).toBe(true);
    }
  });

  it('at registration: the App API subscription answers 422 with the reason, nothing stored', async () => {
    const s = await storeWithApp(strict, { scopes: WEBHOOK_SCOPES, tier: 'enterprise', appUrl: PUBLIC_URL });
    const res = await strict.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic: 'orders/create', address: 'https://8.8.8.8:0/hook' } } });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toEqual({ errors: { address: ['must not use port 0'] } });
    const { rows } = await strict.db.query('SELECT address FROM webhook_subscriptions WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows).toEqual([]);
  });
});
