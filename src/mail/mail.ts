// The mail layer (design.md: nodemailer when SMTP_URL is set; always recorded in the email log of
// C12.3). Every email gets a log row first; then, with SMTP configured, it is sent and the row says
// `sent` or `failed`; without SMTP the row says `logged` and that is all.
//
//   sendMail(deps, message)          record and send now (outside any transaction)
//   recordMail(tx, config, message)  record inside a change's transaction (a rolled-back change
//   deliverMail(deps, entry)         leaves no email), then send after the commit
import nodemailer, { type Transporter } from 'nodemailer';
import { Type, type Static } from 'typebox';
import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { uuidv7 } from '../ids.js';
import { emailKey } from '../email.js';
import { Id, StringEnum, Timestamp } from '../http/schemas.js';
import { storableText } from '../functions/runtime/storable-text.js';

export interface MailMessage {
  to: string;
  subject: string;
  /** Which kind of email (e.g. `order_shipped`); the log and tests look emails up by it. */
  template: string;
  text: string;
  html?: string;
  storeId?: string | null;
}

export const MAIL_STATUSES = ['queued', 'sent', 'logged', 'failed'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

export interface MailEntry {
  id: string;
  message: MailMessage;
  status: MailStatus;
}

/** The email log record of C12.3. */
export const EmailSchema = Type.Object({
  emailId: Id(),
  to: Type.String(),
  subject: Type.String(),
  template: Type.String({ description: 'which kind of email, e.g. order_shipped' }),
  status: StringEnum(MAIL_STATUSES, { description: 'queued (SMTP send pending), sent, failed, or logged (no SMTP configured)' }),
  createdAt: Timestamp(),
});
export type EmailView = Static<typeof EmailSchema>;

/** SMTP sends that are still under way (awaited by `flushMail`, e.g. before a test reads the log). */
const inFlight = new Set<Promise<void>>();
const transports = new Map<string, Transporter>();

function transportFor(smtpUrl: string): Transporter {
  let t = transports.get(smtpUrl);
  if (!t) {
    // Bounded waits: a dead mail server must not hold a send (and its log row) forever.
    // (the URL's own query parameters win over these defaults).
    t = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 } as any);
    transports.set(smtpUrl, t);
  }
  return t;
}

/** The sender address: no-reply at the service's own host. */
export function fromAddress(config: Config): string {
  let host = 'localhost';
  try {
    host = new URL(config.baseUrl).hostname || host;
  } catch {
    // keep localhost
  }
  return `Store Platform <no-reply@${host}>`;
}

/** Writes the log row: `queued` when SMTP will send it, else `logged` (final). */
export async function recordMail(q: Queryable, config: Config, message: MailMessage, now: Date): Promise<MailEntry> {
  const id = uuidv7(now.getTime());
  const status: MailStatus = config.smtpUrl ? 'queued' : 'logged';
  await q.query(
    `INSERT INTO email_log (id, store_id, to_address, subject, template, body, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
    [id, message.storeId ?? null, message.to, message.subject, message.template, message.text, status, now],
  );
  return { id, message, status };
}

/**
 * Sends a recorded email through SMTP (when configured) and records the outcome. Never throws: a
 * failed send is a `failed` row with its error, not a failed request.
 */
export async function deliverMail(deps: Pick<Deps, 'config' | 'db' | 'clock' | 'log'>, entry: MailEntry): Promise<MailStatus> {
  const smtpUrl = deps.config.smtpUrl;
  if (!smtpUrl || entry.status !== 'queued') return entry.status;
  let status: MailStatus = 'sent';
  let error: string | null = null;
  try {
    await transportFor(smtpUrl).sendMail({
      from: fromAddress(deps.config),
      to: entry.message.to,
      subject: entry.message.subject,
      text: entry.message.text,
      ...(entry.message.html ? { html: entry.message.html } : {}),
    });
  } catch (err) {
    status = 'failed';
    // The SMTP server's reply is a third party's text: made storable, or its NUL would fail the
    // update below and the recovery sweep would send the message again and again.
    error = storableText(err instanceof Error ? err.message.slice(0, 1000) : String(err));
    // The message stays in the email log (operators only): SMTP replies quote recipient addresses.
    const e = err as { code?: unknown; responseCode?: unknown };
    deps.log.warn({ emailId: entry.id, template: entry.message.template, code: e?.code, responseCode: e?.responseCode }, 'sending an email failed');
  }
  await deps.db
    .query('UPDATE email_log SET status = $2, error = $3, updated_at = $4 WHERE id = $1', [entry.id, status, error, deps.clock.now()])
    .catch((err) => deps.log.error({ err, emailId: entry.id }, 'recording an email outcome failed; the recovery sweep sends it again'));
  return status;
}

/** Record and send now. Call outside any transaction (SMTP is network I/O). */
export async function sendMail(deps: Pick<Deps, 'config' | 'db' | 'clock' | 'log'>, message: MailMessage): Promise<MailEntry> {
  const entry = await recordMail(deps.db, deps.config, message, deps.clock.now());
  const status = await deliverMail(deps, entry);
  return { ...entry, status };
}

/**
 * Sends recorded emails in the background after a change committed, so the request does not wait
 * for the mail server. `flushMail` waits for every send started this way.
 */
export function deliverLater(deps: Pick<Deps, 'config' | 'db' | 'clock' | 'log'>, entries: MailEntry[]): void {
  for (const entry of entries) {
    if (entry.status !== 'queued') continue;
    const p = deliverMail(deps, entry).then(() => undefined, () => undefined);
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }
}

export async function flushMail(): Promise<void> {
  while (inFlight.size) await Promise.all([...inFlight]);
}

export function emailView(row: { id: string; to_address: string; subject: string; template: string; status: MailStatus; created_at: Date }): EmailView {
  return {
    emailId: row.id,
    to: row.to_address,
    subject: row.subject,
    template: row.template,
    status: row.status,
    createdAt: row.created_at.toISOString(),
  };
}

/**
 * Newest first; `to` matches the whole address in any case: its kept form (src/email.ts, as every
 * writer of a recipient keeps an email), not SQL's lower() of it, which differs from JavaScript's.
 */
export async function listEmails(q: Queryable, opts: { to?: string; limit: number; offset: number }) {
  const to = opts.to ? emailKey(opts.to) : undefined;
  const where = to ? 'WHERE lower(to_address) = lower($3)' : '';
  const params: unknown[] = [opts.limit, opts.offset];
  if (to) params.push(to);
  const [page, count] = await Promise.all([
    q.query<Parameters<typeof emailView>[0]>(
      `SELECT id, to_address, subject, template, status, created_at FROM email_log ${where}
        ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`,
      params,
    ),
    q.query<{ n: number }>(`SELECT count(*)::int AS n FROM email_log ${to ? 'WHERE lower(to_address) = lower($1)' : ''}`, to ? [to] : []),
  ]);
  return { emails: page.rows.map(emailView), total: count.rows[0].n };
}

/** How long a `queued` email may wait before the recovery sweep takes it over. */
export const STALE_QUEUED_MS = 2 * 60_000;

/**
 * Recovery: an email recorded `queued` in a committed change is normally sent at once after the
 * commit (`deliverLater`); if the process died first, it would stay queued for ever. Workers run
 * this sweep: a row still queued after STALE_QUEUED_MS is claimed (its `updated_at` moved on, so
 * another worker skips it for as long) and sent. At-least-once, like every notification here.
 */
export async function resendStaleMail(deps: Pick<Deps, 'config' | 'db' | 'clock' | 'log'>, limit = 50): Promise<number> {
  if (!deps.config.smtpUrl) return 0;
  const now = deps.clock.now();
  const { rows } = await deps.db.query<{ id: string; store_id: string | null; to_address: string; subject: string; template: string; body: string }>(
    `UPDATE email_log SET updated_at = $1
      WHERE id IN (SELECT id FROM email_log WHERE status = 'queued' AND updated_at < $2
                    ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING id, store_id, to_address, subject, template, body`,
    [now, new Date(now.getTime() - STALE_QUEUED_MS), limit],
  );
  for (const r of rows) {
    await deliverMail(deps, { id: r.id, status: 'queued', message: { to: r.to_address, subject: r.subject, template: r.template, text: r.body, storeId: r.store_id } });
  }
  return rows.length;
}
