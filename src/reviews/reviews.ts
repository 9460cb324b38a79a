// App reviews (C10.8, C14.9): `POST /apps/{appId}/reviews` with a merchant JWT, one review per
// store and app (a second replaces the first); the app's `rating` is the mean and `reviewCount`
// the number of reviews, recomputed in the same transaction under a lock on the app row.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { badRequest, forbidden, notFound } from '../http/errors.js';
import { envelope } from '../http/shapes.js';
import { isUuid, uuidv7 } from '../ids.js';

const MAX_BODY = 5000;

interface ReviewRow {
  id: string;
  app_id: string;
  store_id: string;
  rating: number;
  body: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function submitReview(deps: Deps, storeId: string, authorId: string, appId: string, body: Record<string, unknown>) {
  const rating = typeof body.rating === 'string' && body.rating.trim() !== '' ? Number(body.rating) : body.rating;
  if (typeof rating !== 'number' || !Number.isInteger(rating) || rating < 1 || rating > 5) throw badRequest('rating must be a whole number from 1 to 5');
  if (body.body !== undefined && body.body !== null && typeof body.body !== 'string') throw badRequest('body must be a string');
  const text = typeof body.body === 'string' ? body.body : null;
  if (text !== null && text.length > MAX_BODY) throw badRequest(`body must be at most ${MAX_BODY} characters`);
  if (!isUuid(appId)) throw notFound('App not found');
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const { rows: apps } = await tx.query<{ id: string }>('SELECT id FROM apps WHERE id = $1 FOR UPDATE', [appId]);
    if (!apps[0]) throw notFound('App not found');
    const { rows: installed } = await tx.query(`SELECT 1 FROM installations WHERE app_id = $1 AND store_id = $2 AND status = 'active'`, [appId, storeId]);
    if (!installed.length) throw forbidden('The app is not installed on this store');
    const { rows } = await tx.query<ReviewRow & { inserted: boolean }>(
      `INSERT INTO app_reviews (id, app_id, store_id, author_id, rating, body, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
       ON CONFLICT (app_id, store_id) DO UPDATE SET rating = EXCLUDED.rating, body = EXCLUDED.body,
         author_id = EXCLUDED.author_id, updated_at = EXCLUDED.updated_at
       RETURNING *, (xmax = 0) AS inserted`,
      [uuidv7(), appId, storeId, authorId, rating, text, now],
    );
    const { rows: stats } = await tx.query<{ rating: string; review_count: number }>(
      `UPDATE apps SET rating = s.mean, review_count = s.n
         FROM (SELECT coalesce(round(avg(rating), 2), 0) AS mean, count(*)::int AS n FROM app_reviews WHERE app_id = $1) s
        WHERE apps.id = $1 RETURNING apps.rating, apps.review_count`,
      [appId],
    );
    const r = rows[0];
    return {
      created: r.inserted,
      review: {
        reviewId: r.id,
        appId: r.app_id,
        storeId: r.store_id,
        rating: r.rating,
        body: r.body,
        createdAt: r.created_at.toISOString(),
        updatedAt: r.updated_at.toISOString(),
      },
      app: { appId, rating: Number(stats[0].rating), reviewCount: stats[0].review_count },
    };
  });
}

/** Registered in the merchant admin surface (merchant JWT). */
export async function reviewRoutes(admin: FastifyInstance, { deps }: { deps: Deps }) {
  admin.post('/apps/:appId/reviews', {
    schema: {
      tags: ['reviews'], summary: 'Review an app installed on the store (C10.8)',
      params: Type.Object({ appId: Type.String() }), body: Type.Object({}, { additionalProperties: true }),
    },
  }, async (request, reply) => {
    const { created, ...data } = await submitReview(deps, adminStoreId(request), request.user!.id, (request.params as any).appId, (request.body ?? {}) as any);
    const status = created ? 201 : 200;
    return reply.code(status).send(envelope(data, status));
  });
}
