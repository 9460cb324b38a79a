// C12.3 `GET /apps/admin/emails?to=...` (operator surface, SUPER_ADMIN): the outgoing email log,
// newest first, as an envelope list `data.emails` with `count` and `pagination` (C14.8).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { parsePage } from '../http/paging.js';
import { envelopeList } from '../http/shapes.js';
import { listEmails } from './mail.js';

export async function emailLogRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  app.get('/apps/admin/emails', {
    schema: {
      tags: ['operator'],
      summary: 'The outgoing email log (C12.3), newest first; `to` filters by recipient (whole address, any case)',
      querystring: Type.Object({
        to: Type.Optional(Type.String()),
        page: Type.Optional(Type.String()),
        limit: Type.Optional(Type.String()),
      }),
    },
  }, async (request) => {
    const query = request.query as Record<string, string | undefined>;
    const page = parsePage(query);
    const to = query.to?.trim() || undefined;
    const { emails, total } = await listEmails(deps.db, { to, limit: page.limit, offset: page.offset });
    return envelopeList({ emails }, page, emails.length, total);
  });
}
