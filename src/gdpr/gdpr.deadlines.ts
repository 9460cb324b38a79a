// The daily deadline job (C9.3, C14.11; registered as `gdpr-deadlines` for C12.2). For each request
// that still waits on an app:
//   acknowledge deadline passed: apps still `pending` -> `failed`, the request -> `failed`, and the
//     webhook goes to those apps again as a final notice;
//   completion deadline passed: apps not `completed` (pending or acknowledged) -> `failed`, and the
//     request -> `failed` unless it was completed;
//   completion deadline within 7 days: the webhook again as a reminder to the apps not yet completed
//     (failed apps excluded: they had their final notice), at most once per request, app and UTC day.
// Each app that fails gets the merchant a notification and an email (C9.5).
//
// One short transaction per request, holding its row lock: a second run (another worker, C12.2 on
// demand) waits, then finds the work done: states are re-read under the lock and each reminder is
// keyed by its day. Webhooks and emails go out after that transaction commits.
//
// An app's acknowledge or complete call applies the same failures to its request first, under the
// same lock (`applyDeadlines`, reminders aside): an app is late from its deadline on, not from the
// job's next run, and the job then finds it `failed` and leaves it be.
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { deliverLater, recordMail, type MailEntry } from '../mail/mail.js';
import { createNotification } from '../notifications/notifications.repo.js';
import { DAY_MS, REMINDER_DAYS, appStatesOf, findRequest, type AppStateRow, type RequestRow } from './gdpr.repo.js';
import { createGdprDeliveries, gdprAppsById } from './gdpr.deliveries.js';
import { settleRequest } from './gdpr.state.js';
import { recoverDispatches } from './gdpr.dispatch.js';

function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

const TYPE_LABEL: Record<string, string> = {
  data_request: 'customer data request',
  customer_redact: 'customer redaction request',
  shop_redact: 'shop redaction request',
};

type FailReason = 'acknowledge_deadline' | 'completion_deadline';

interface Failure {
  app: AppStateRow;
  reason: FailReason;
  message: string;
}

/** C9.5: the merchant hears of each failed app, in the transaction that failed it. */
async function notifyFailures(deps: Deps, tx: Queryable, req: RequestRow, failures: Failure[], now: Date): Promise<MailEntry[]> {
  if (!failures.length) return [];
  const { rows } = await tx.query<{ email: string; business: string }>('SELECT email, business FROM stores WHERE id = $1', [req.store_id]);
  const store = rows[0];
  const mails: MailEntry[] = [];
  const label = TYPE_LABEL[req.request_type] ?? req.request_type;
  for (const f of failures) {
    const missed = f.reason === 'acknowledge_deadline' ? 'acknowledge' : 'complete';
    const title = `${f.app.app_name} failed a GDPR ${label}`;
    const message = `${f.app.app_name} did not ${missed} GDPR request ${req.id} (${label}${req.customer_email ? ` for ${req.customer_email}` : ''}) `
      + `by its deadline of ${(f.reason === 'acknowledge_deadline' ? req.acknowledge_deadline : req.completion_deadline).toISOString()}. `
      + 'The request is marked failed for this app. Missing the completion deadline is grounds for removal from the marketplace.';
    await createNotification(tx, {
      storeId: req.store_id, type: 'gdpr_app_failed', title, message,
      data: { requestId: req.id, requestType: req.request_type, appId: f.app.app_id, appName: f.app.app_name, reason: f.reason },
    }, now);
    if (store?.email) {
      mails.push(await recordMail(tx, deps.config, {
        to: store.email, subject: title, template: 'gdpr_app_failed', storeId: req.store_id,
        text: `Hello ${store.business},\n\n${message}\n\nSee the request in your admin: GET /apps/gdpr/requests/${req.id}\n`,
      }, now));
    }
  }
  return mails;
}

/**
 * What C9.3 did to one request, in the transaction that holds its row lock: the deliveries and mails
 * to send once that transaction committed.
 */
export interface DeadlineOutcome {
  changed: boolean;
  /** The request as it stands now (failed, settled). */
  req: RequestRow;
  deliveryIds: string[];
  mails: MailEntry[];
}

/**
 * C9.3 for one request: the job's rule, and the one an app's acknowledge or complete call applies
 * first (gdpr.service.ts `appGdprAction`), so that whoever looks first, an app is late from the same
 * instant on and fails the same way: status, error message, final notice, the merchant's
 * notification and email, the request's status. A second look finds the app `failed` and does
 * nothing again. Called inside a transaction holding the request's row lock, with `apps` read under
 * it (updated in place).
 *
 * A deadline is missed once `now` is past it: at the deadline instant exactly the app is still on
 * time (`deadline < now`, here and in the job's query).
 *
 * `reminders`: the job's daily reminders (once per app and UTC day) go out with its own runs only.
 */
export async function applyDeadlines(
  deps: Deps,
  tx: Queryable,
  req: RequestRow,
  apps: AppStateRow[],
  now: Date,
  opts: { reminders: boolean },
): Promise<DeadlineOutcome> {
  const requestId = req.id;
  const today = utcDay(now);
  const failures: Failure[] = [];
  const fail = (app: AppStateRow, reason: FailReason, message: string) => {
    app.status = 'failed';
    app.failed_at = now;
    app.error_message = message;
    failures.push({ app, reason, message });
  };

  const finalNotice: AppStateRow[] = [];
  if (req.acknowledge_deadline < now) {
    for (const app of apps.filter((a) => a.status === 'pending')) {
      fail(app, 'acknowledge_deadline', `Not acknowledged by the acknowledge deadline (${req.acknowledge_deadline.toISOString()})`);
      app.final_notice_at = now;
      finalNotice.push(app);
    }
  }
  const reminders: AppStateRow[] = [];
  if (req.completion_deadline < now) {
    for (const app of apps.filter((a) => a.status === 'pending' || a.status === 'acknowledged')) {
      fail(app, 'completion_deadline', `Not completed by the completion deadline (${req.completion_deadline.toISOString()})`);
    }
  } else if (opts.reminders && req.completion_deadline.getTime() - REMINDER_DAYS * DAY_MS <= now.getTime()) {
    for (const app of apps) {
      if ((app.status === 'pending' || app.status === 'acknowledged') && app.last_reminder_day !== today) {
        app.last_reminder_day = today;
        reminders.push(app);
      }
    }
  }
  if (!failures.length && !reminders.length) return { changed: false, req, deliveryIds: [], mails: [] };

  const changed = [...new Set([...failures.map((f) => f.app), ...reminders])];
  await tx.query(
    `UPDATE gdpr_request_apps ra SET status = x.status, failed_at = x.failed_at, error_message = x.error_message,
       final_notice_at = x.final_notice_at, last_reminder_day = x.last_reminder_day, updated_at = $3
     FROM jsonb_to_recordset($2::jsonb) AS x(app_id uuid, status text, failed_at timestamptz, error_message text,
       final_notice_at timestamptz, last_reminder_day text)
     WHERE ra.request_id = $1 AND ra.app_id = x.app_id`,
    [requestId, JSON.stringify(changed.map((a) => ({
      app_id: a.app_id, status: a.status, failed_at: a.failed_at, error_message: a.error_message,
      final_notice_at: a.final_notice_at, last_reminder_day: a.last_reminder_day,
    }))), now],
  );
  if (failures.length && req.status !== 'failed' && req.status !== 'completed') {
    await tx.query(`UPDATE gdpr_requests SET status = 'failed', failed_at = $2, updated_at = $2 WHERE id = $1`, [requestId, now]);
    req = { ...req, status: 'failed', failed_at: now, updated_at: now };
  }

  const { rows: stores } = await tx.query<{ slug: string }>('SELECT slug FROM stores WHERE id = $1', [req.store_id]);
  const message = { requestId, storeId: req.store_id, shopDomain: stores[0]?.slug ?? '', requestType: req.request_type, topic: req.topic, payload: req.payload };
  const signing = new Map((await gdprAppsById(tx, [...finalNotice, ...reminders].map((a) => a.app_id))).map((a) => [a.app_id, a]));
  const pick = (list: AppStateRow[]) => list.map((a) => signing.get(a.app_id)).filter((a) => a !== undefined);
  const deliveryIds = [
    ...(await createGdprDeliveries(tx, deps.secrets, message, pick(finalNotice), 'final_notice', now)),
    ...(await createGdprDeliveries(tx, deps.secrets, message, pick(reminders), 'reminder', now)),
  ];
  const mails = await notifyFailures(deps, tx, req, failures, now);
  req = await settleRequest(tx, req, apps, now);
  return { changed: true, req, deliveryIds, mails };
}

async function processRequest(deps: Deps, requestId: string): Promise<DeadlineOutcome | null> {
  return deps.db.transaction(async (tx) => {
    const req = await findRequest(tx, requestId, { lock: true });
    if (!req) return null;
    const apps = (await appStatesOf(tx, [requestId])).get(requestId) ?? [];
    return applyDeadlines(deps, tx, req, apps, deps.clock.now(), { reminders: true });
  });
}

/** One run of the job: returns the requests it failed apps of or reminded. */
export async function runGdprDeadlines(deps: Deps): Promise<{ processed: number }> {
  await recoverDispatches(deps);
  const now = deps.clock.now();
  const { rows } = await deps.db.query<{ id: string }>(
    `SELECT r.id FROM gdpr_requests r
      WHERE EXISTS (SELECT 1 FROM gdpr_request_apps ra WHERE ra.request_id = r.id AND ra.status IN ('pending', 'acknowledged')
                      AND ((ra.status = 'pending' AND r.acknowledge_deadline < $1) OR r.completion_deadline <= $1::timestamptz + make_interval(days => $2::int)))
      ORDER BY r.completion_deadline, r.id`,
    [now, REMINDER_DAYS],
  );
  let processed = 0;
  const sends: Promise<unknown>[] = [];
  for (const { id } of rows) {
    const out = await processRequest(deps, id);
    if (!out?.changed) continue;
    processed++;
    deliverLater(deps, out.mails);
    if (out.deliveryIds.length) sends.push(deps.webhooks.sendNow(out.deliveryIds));
  }
  // The run is over when its notices were sent (C12.2 answers once the run is finished).
  for (const r of await Promise.allSettled(sends)) {
    // Unsent deliveries stay in the queue; a worker's delivery loop sends them.
    if (r.status === 'rejected') deps.log.error({ err: r.reason }, 'sending GDPR notices failed');
  }
  return { processed };
}
