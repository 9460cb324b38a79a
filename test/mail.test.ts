// The mail layer (design.md: nodemailer when SMTP_URL is set, always an email log row) and the
// email log of C12.3 (`GET /apps/admin/emails?to=...`, SUPER_ADMIN; envelope `data.emails` with
// count and pagination, C14.8).
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { operatorToken, signupMerchant } from './helpers/actors.js';
import { recordMail, resendStaleMail, sendMail, STALE_QUEUED_MS } from '../src/mail/mail.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { uniq } from './helpers/orders.js';

let h: Harness;
let ops: string;
beforeAll(async () => {
  h = await createHarness();
  ops = await operatorToken(h);
});
afterAll(() => h?.close());

/** Just enough SMTP to accept a message: records the envelope and the DATA. */
function fakeSmtp(options: { rcptReply?: string } = {}): Promise<{ port: number; messages: { from: string; to: string[]; data: string }[]; close(): Promise<void> }> {
  const messages: { from: string; to: string[]; data: string }[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffer = '';
    let inData = false;
    let current = { from: '', to: [] as string[], data: '' };
    socket.write('220 fake ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      let i: number;
      while ((i = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            messages.push(current);
            current = { from: '', to: [], data: '' };
            socket.write('250 OK queued\r\n');
          } else current.data += `${line}\n`;
          continue;
        }
        const cmd = line.slice(0, 4).toUpperCase();
        if (cmd === 'EHLO' || cmd === 'HELO') socket.write('250 fake\r\n');
        else if (cmd === 'MAIL') (current.from = line), socket.write('250 OK\r\n');
        else if (cmd === 'RCPT') current.to.push(line), socket.write(`${options.rcptReply ?? '250 OK'}\r\n`);
        else if (cmd === 'DATA') (inData = true), socket.write('354 go ahead\r\n');
        else if (cmd === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 OK\r\n');
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      resolve({
        port,
        messages,
        close: () => new Promise<void>((r) => {
          for (const s of sockets) s.destroy();
          server.close(() => r());
        }),
      });
    });
  });
}

const list = (query = '', token = ops) => h.req('GET', `/apps/admin/emails${query}`, { token });

describe('sendMail', () => {
  it('without SMTP: one log row, status logged', async () => {
    const to = `nosmtp-${uniq()}@example.com`;
    const entry = await sendMail(h.deps, { to, subject: 'Hello', template: 'test', text: 'Hi' });
    expect(entry.status).toBe('logged');
    expect((await list(`?to=${to}`)).json().data.emails).toEqual([
      { emailId: entry.id, to, subject: 'Hello', template: 'test', status: 'logged', createdAt: expect.any(String) },
    ]);
  });

  it('with SMTP: sent through nodemailer and recorded as sent', async () => {
    const smtp = await fakeSmtp();
    try {
      const deps = { ...h.deps, config: { ...h.deps.config, smtpUrl: `smtp://127.0.0.1:${smtp.port}` } };
      const to = `smtp-${uniq()}@example.com`;
      const entry = await sendMail(deps, { to, subject: 'Your order', template: 'order_shipped', text: 'On its way' });
      expect(entry.status).toBe('sent');
      expect(smtp.messages).toHaveLength(1);
      expect(smtp.messages[0].to.join()).toContain(to);
      expect(smtp.messages[0].data).toContain('Subject: Your order');
      expect(smtp.messages[0].data).toContain('On its way');
      expect((await list(`?to=${to}`)).json().data.emails[0].status).toBe('sent');
    } finally {
      await smtp.close();
    }
  });

  it('an unreachable SMTP server: recorded as failed, never thrown', async () => {
    const smtp = await fakeSmtp();
    const port = smtp.port;
    await smtp.close();
    const deps = { ...h.deps, config: { ...h.deps.config, smtpUrl: `smtp://127.0.0.1:${port}` } };
    const to = `down-${uniq()}@example.com`;
    const entry = await sendMail(deps, { to, subject: 'S', template: 't', text: 'x' });
    expect(entry.status).toBe('failed');
    expect((await list(`?to=${to}`)).json().data.emails[0].status).toBe('failed');
  });

  it('an SMTP server whose refusal holds a NUL: recorded as failed, the reply kept with U+FFFD (storable-text.ts)', async () => {
    const smtp = await fakeSmtp({ rcptReply: '550 no such user \u0000 here' });
    try {
      const deps = { ...h.deps, config: { ...h.deps.config, smtpUrl: `smtp://127.0.0.1:${smtp.port}` } };
      const to = `refused-${uniq()}@example.com`;
      const entry = await sendMail(deps, { to, subject: 'S', template: 't', text: 'x' });
      expect(entry.status).toBe('failed');
      const { rows } = await h.db.query<{ status: string; error: string }>('SELECT status, error FROM email_log WHERE id = $1', [entry.id]);
      expect(rows[0].status).toBe('failed');
      expect(rows[0].error).toContain('no such user \ufffd here');
    } finally {
      await smtp.close();
    }
  });
});

describe('GET /apps/admin/emails (C12.3)', () => {
  it('newest first, filtered by recipient in any case, with count and pagination', async () => {
    const to = `Log-${uniq()}@Example.com`;
    for (let i = 1; i <= 3; i++) {
      await sendMail(h.deps, { to, subject: `S${i}`, template: 'test', text: 'x' });
      await h.advance(1);
    }
    await sendMail(h.deps, { to: `other-${uniq()}@example.com`, subject: 'other', template: 'test', text: 'x' });
    const res = await list(`?to=${encodeURIComponent(to.toLowerCase())}&limit=2`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ status: 200, state: 'success', message: null, count: 3, pagination: { page: 1, limit: 2, totalPages: 2, resultCount: 2, totalResult: 3 } });
    expect(body.data.emails.map((e: any) => e.subject)).toEqual(['S3', 'S2']);
    const p2 = (await list(`?to=${encodeURIComponent(to)}&limit=2&page=2`)).json();
    expect(p2.data.emails.map((e: any) => e.subject)).toEqual(['S1']);
    const all = (await list()).json();
    expect(all.count).toBeGreaterThanOrEqual(4);
  });

  it('SUPER_ADMIN only: 401 without a token, 403 for a merchant', async () => {
    expectEnvelopeError(await h.req('GET', '/apps/admin/emails'), 401);
    const merchant = await signupMerchant(h);
    expectEnvelopeError(await list('', merchant.token), 403);
  });

  it('a queued email left by a crash is sent by the recovery sweep, once', async () => {
    const smtp = await fakeSmtp();
    try {
      const deps = { ...h.deps, config: { ...h.deps.config, smtpUrl: `smtp://127.0.0.1:${smtp.port}` } };
      const to = `recover-${uniq()}@example.com`;
      // Recorded in a committed change, then the process "died" before sending it.
      const entry = await recordMail(h.db, deps.config, { to, subject: 'Your order shipped', template: 'order_shipped', text: 'On its way' }, h.clock.now());
      expect(entry.status).toBe('queued');
      const status = async () => (await h.db.query('SELECT status FROM email_log WHERE id = $1', [entry.id])).rows[0].status;
      await resendStaleMail(deps); // not stale yet: the sender may still be at work
      expect(await status()).toBe('queued');
      await h.advance(STALE_QUEUED_MS / 1000 + 1);
      await resendStaleMail(deps);
      expect(await status()).toBe('sent');
      await h.advance(STALE_QUEUED_MS / 1000 + 1);
      await resendStaleMail(deps);
      expect(smtp.messages.filter((m) => m.to.some((t) => t.includes(to)))).toHaveLength(1);
    } finally {
      await smtp.close();
    }
  });
});
