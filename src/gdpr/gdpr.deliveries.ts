// GDPR webhooks (app-api.md GDPR webhooks, C9.4): for each app, one delivery to each enabled
// subscription (API or manifest) of the topic and one to its configured `gdprUrls` entry, the same
// address only once. Every one is signed with the app's client secret (read now, so a rotated
// secret applies from then on, C8.7), carries `X-SVC-Gdpr-Request-Id`, is logged with source `gdpr`
// and is never retried (Retries 5). Written inside the caller's transaction; sent after its commit.
import type { Queryable } from '../db/db.js';
import type { SecretBox } from '../crypto.js';
import { createDeliveries, type NewDelivery } from '../webhooks/deliveries.repo.js';
import { findTargets } from '../webhooks/fanout.js';
import { GDPR_URL_KEY, linkDeliveries, type DeliveryKind, type GdprRequestType } from './gdpr.repo.js';

export interface GdprApp {
  app_id: string;
  gdpr_urls: Record<string, string> | null;
  client_secret_enc: string;
}

export interface GdprMessage {
  requestId: string;
  storeId: string;
  shopDomain: string;
  requestType: GdprRequestType;
  topic: string;
  /** The exact body text. */
  payload: string;
}

/** The apps' current signing data (secret, gdprUrls), whatever their installation's state now. */
export async function gdprAppsById(q: Queryable, appIds: string[]): Promise<GdprApp[]> {
  if (!appIds.length) return [];
  const { rows } = await q.query<GdprApp>(
    'SELECT id AS app_id, gdpr_urls, client_secret_enc FROM apps WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)',
    [JSON.stringify(appIds)],
  );
  return rows;
}

/** Creates and links the deliveries of `message` to `apps`; returns the delivery ids. */
export async function createGdprDeliveries(
  tx: Queryable,
  secrets: SecretBox,
  message: GdprMessage,
  apps: GdprApp[],
  kind: DeliveryKind,
  now: Date,
): Promise<string[]> {
  if (!apps.length) return [];
  const wanted = new Set(apps.map((a) => a.app_id));
  // Store-level webhooks never take GDPR topics (they are app obligations), so only app targets count.
  const targets = (await findTargets(tx, [message.storeId], [message.topic]))
    .filter((t) => t.app_id !== null && wanted.has(t.app_id) && (t.source === 'subscription' || t.source === 'manifest'));
  const specs: NewDelivery[] = [];
  const owners: string[] = [];
  for (const app of apps) {
    const secret = secrets.open(app.client_secret_enc);
    const seen = new Set<string>();
    const add = (address: string, subscriptionId: string | null) => {
      if (seen.has(address)) return;
      seen.add(address);
      owners.push(app.app_id);
      specs.push({
        source: 'gdpr', appId: app.app_id, storeId: message.storeId, topic: message.topic, address, body: message.payload, secret,
        shopDomain: message.shopDomain, extraHeaders: { 'X-SVC-Gdpr-Request-Id': message.requestId }, maxAttempts: 1, subscriptionId,
      });
    };
    const url = app.gdpr_urls?.[GDPR_URL_KEY[message.requestType]];
    if (typeof url === 'string' && url) add(url, null);
    for (const t of targets) if (t.app_id === app.app_id) add(t.address, t.source === 'subscription' ? t.target_id : null);
  }
  const created = await createDeliveries(tx, specs, now);
  await linkDeliveries(tx, created.map((d, i) => ({ deliveryId: d.deliveryId, requestId: message.requestId, appId: owners[i], kind })), now);
  return created.map((d) => d.deliveryId);
}
