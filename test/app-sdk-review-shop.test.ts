// packages/app-sdk reviewed for what an unsigned header and a shared directory let others do
// (docs/decisions.md, "App developer kit (issue 14)"):
// - The shop of a GDPR delivery came from `X-SVC-Shop-Domain`, which no signature covers (app-api.md
//   Signature: the HMAC is over the raw body only), and was never compared with the signed body's
//   `shop_domain` (C2.5: the same slug). A signed customers/redact or shop/redact of one store,
//   replayed with another store's header, verified, and an app erased that other store's data.
//   Likewise a data request's signed `data_request.id` against `X-SVC-Gdpr-Request-Id`.
// - FileTokenStore wrote its temporary file at a predictable name (`<file>.<pid>.tmp`) without an
//   exclusive create: a symlink placed there beforehand took the tokens elsewhere, and the rename then
//   made the token file itself that symlink.
// The GDPR bodies are the platform's own (`gdprPayload`, src/gdpr), signed as it signs them.
import { lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedAfterEach, gdprEndpoint as gdprEndpointOf } from './helpers/gdpr-endpoint.js';
import { tempDir } from './helpers/temp-dirs.js';
import { gdprPayload } from '../src/gdpr/gdpr.service.js';
import { signedHeaders } from '../src/webhooks/deliveries.repo.js';
import {
  FileTokenStore, parseWebhook, receiveWebRequest, refusalResponse, verifyMessage,
} from '../packages/app-sdk/src/index.js';

const SECRET = 'svcsk_review-shop-secret';
const VICTIM = 'other-store';
const SENDER = { storeId: '0190b7e0-0000-7000-8000-000000000001', shopDomain: 'honest-store' };
const REQUEST_ID = '0190b7e0-0000-7000-8000-0000000000aa';
const customer = { id: '0190b7e0-0000-7000-8000-0000000000c1', email: 'ada@example.com', phone: null };

type GdprType = Parameters<typeof gdprPayload>[0];
const TOPIC: Record<GdprType, string> = { data_request: 'customers/data_request', customer_redact: 'customers/redact', shop_redact: 'shop/redact' };

/** A GDPR delivery exactly as the platform makes it: its body, its signature, its headers. */
function delivery(type: GdprType, requestId = REQUEST_ID) {
  const body = JSON.stringify(gdprPayload(type, { ...SENDER, requestId, customer, ordersRequested: true, orderIds: ['1001'] }));
  const headers: Record<string, string> = { ...signedHeaders(SECRET, body, TOPIC[type], SENDER.shopDomain), 'X-SVC-Gdpr-Request-Id': requestId };
  return { body, headers };
}

const servers = closedAfterEach();
const gdprEndpoint = () => gdprEndpointOf(servers, SECRET);

describe('a GDPR delivery names the store its signed body names (C2.5, C9; app-api.md Signature)', () => {
  for (const type of ['customer_redact', 'shop_redact', 'data_request'] as const) {
    it(`${TOPIC[type]} replayed with another store's X-SVC-Shop-Domain is refused (400) and never reaches the handler; the honest one passes`, async () => {
      const { url, handled } = await gdprEndpoint();
      const { body, headers } = delivery(type);
      const replayed = await fetch(url, { method: 'POST', body, headers: { ...headers, 'X-SVC-Shop-Domain': VICTIM } });
      expect(replayed.status).toBe(400);
      expect(await replayed.json()).toEqual({ error: 'shop mismatch' });
      expect(handled).toEqual([]);

      const honest = await fetch(url, { method: 'POST', body, headers });
      expect(honest.status).toBe(200);
      expect(handled.map((m) => [m.topic, m.shop, m.gdprRequestId])).toEqual([[TOPIC[type], SENDER.shopDomain, REQUEST_ID]]);
    });
  }

  it('a data request whose X-SVC-Gdpr-Request-Id is not its signed data_request.id is refused (400), the handler never called', async () => {
    const { url, handled } = await gdprEndpoint();
    const { body, headers } = delivery('data_request');
    const res = await fetch(url, { method: 'POST', body, headers: { ...headers, 'X-SVC-Gdpr-Request-Id': '0190b7e0-0000-7000-8000-0000000000bb' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'request id mismatch' });
    expect(handled).toEqual([]);
  });

  it('the Web adapter refuses the replay as well (refusalResponse: 400)', async () => {
    const { body, headers } = delivery('shop_redact');
    const verdict = await receiveWebRequest(new Request('http://app/gdpr', { method: 'POST', body, headers: { ...headers, 'X-SVC-Shop-Domain': VICTIM } }), { secret: SECRET });
    expect(verdict).toEqual({ ok: false, reason: 'shop mismatch' });
    if (verdict.ok) throw new Error('narrowing');
    expect(refusalResponse(verdict).status).toBe(400);
  });

  it('without the headers, the shop and request id are the signed body\'s; verifyMessage checks as parseWebhook does', () => {
    const { body, headers } = delivery('data_request');
    const bare = { ...headers };
    delete bare['X-SVC-Shop-Domain'];
    delete bare['X-SVC-Gdpr-Request-Id'];
    const message = parseWebhook({ rawBody: body, headers: bare, secret: SECRET });
    expect(message.ok && [message.shop, message.gdprRequestId]).toEqual([SENDER.shopDomain, REQUEST_ID]);
    expect(verifyMessage({ rawBody: body, headers: { ...headers, 'x-svc-shop-domain': VICTIM }, secret: SECRET })).toEqual({ ok: false, reason: 'shop mismatch' });
  });

  it('a topic whose body names no store keeps the header\'s shop (orders/create: app-api.md, the header identifies the store)', () => {
    const body = JSON.stringify({ id: '1', name: '#1001', shipping_lines: [] });
    const message = parseWebhook({ rawBody: body, headers: signedHeaders(SECRET, body, 'orders/create', 'some-store'), secret: SECRET });
    expect(message.ok && message.shop).toBe('some-store');
  });
});

describe('FileTokenStore writes its temporary file exclusively, at a name no one can guess', () => {
  it('a symlink placed at the old predictable temporary name is not followed: the tokens stay in the token file (mode 0600)', async () => {
    const dir = tempDir('svc-sdk-tmpname-');
    const path = join(dir, 'tokens.json');
    const elsewhere = join(dir, 'attacker-owned.json');
    writeFileSync(elsewhere, '');
    symlinkSync(elsewhere, `${path}.${process.pid}.tmp`);
    const tokens = { accessToken: 'a', refreshToken: 'r', accessExpiresAt: Date.now() + 3600_000, refreshExpiresAt: Date.now() + 86400_000, scopes: [] };
    await new FileTokenStore(path).set('shop-a', tokens);

    expect(readFileSync(elsewhere, 'utf8')).toBe('');
    expect(lstatSync(path).isSymbolicLink()).toBe(false);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ 'shop-a': tokens });
    expect(await new FileTokenStore(path).get('shop-a')).toEqual(tokens);
    // The symlink is someone else's file: left as it was, and no temporary file of ours is left.
    expect(lstatSync(`${path}.${process.pid}.tmp`).isSymbolicLink()).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['attacker-owned.json', 'tokens.json', `tokens.json.${process.pid}.tmp`]);
  });
});
