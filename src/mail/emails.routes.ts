// C12.3 `GET /apps/admin/emails?to=...` (operator surface, SUPER_ADMIN): the outgoing email log,
// newest first, as an envelope list `data.emails` with `count` and `pagination` (C14.8).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { envelopeList } from '../http/shapes.js';
import type { Deps } from '../deps.js';
import { parsePage } from '../http/paging.js';
import { envelopeListOf, pagedQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { EmailSchema, listEmails } from './mail.js';

export async function emailLogRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);
  app.get('/apps/admin/emails', {
    schema: {
      tags: ['operator'],
      summary: 'The outgoing email log (C12.3), newest first; `to` filters by recipient (whole address, any case)',
      querystring: pagedQuery({ to: Type.Optional(Type.String({ description: 'the recipient address, whole, any case; trimmed; blank lists all' })) }),
      response: { 200: envelopeListOf(Type.Object({ emails: Type.Array(EmailSchema) })) },
    },
  }, async (request) => {
    const page = parsePage(request.query);
    const to = request.query.to?.trim() || undefined;
    const { emails, total } = await listEmails(deps.db, { to, limit: page.limit, offset: page.offset });
    return envelopeList({ emails }, page, emails.length, total);
  });
}
