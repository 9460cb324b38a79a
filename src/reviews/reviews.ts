// App reviews (C10.8, C14.9): `POST /apps/{appId}/reviews` with a merchant JWT, one review per
// store and app (a second replaces the first); the app's `rating` is the mean and `reviewCount`
// the number of reviews, recomputed in the same transaction under a lock on the app row.
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Deps } from '../deps.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { badRequest, forbidden, notFound } from '../http/errors.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf, nullable, Timestamp } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { isUuid, uuidv7 } from '../ids.js';
import { longerThan } from '../text.js';

const MAX_BODY = 5000;

const RATING_WORDS = 'must be a whole number from 1 to 5';

/**
 * The review as a merchant sends it. `rating` may come as a numeric string too ("4"), which
 * `submitReview` reads; a missing rating gets the same words as a wrong one.
 */
const reviewBody = Type.Object({
  rating: Type.Unsafe<number | string>({
    type: ['integer', 'string'], minimum: 1, maximum: 5,
    description: 'a whole number from 1 to 5 (a numeric string is read as its number)', 'x-error': RATING_WORDS,
  }),
  body: Type.Optional(nullable(Type.String({ maxLength: MAX_BODY }), {
    description: `the review text, at most ${MAX_BODY} characters`, 'x-error': { maxLength: `must be at most ${MAX_BODY} characters` },
  })),
}, { 'x-error': { required: RATING_WORDS } });
type ReviewBody = Static<typeof reviewBody>;

/** What `submitReview` answers: the review, and the app's new mean rating and count. */
const ReviewResultSchema = Type.Object({
  review: Type.Object({
    reviewId: Type.String(),
    appId: Type.String(),
    storeId: Type.String(),
    rating: Type.Integer({ minimum: 1, maximum: 5 }),
    body: nullable(Type.String()),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  }),
  app: Type.Object({
    appId: Type.String(),
    rating: Type.Number({ description: 'the mean of its reviews, two decimals; 0 without reviews' }),
    reviewCount: Type.Integer(),
  }),
});

interface ReviewRow {
  id: string;
  app_id: string;
  store_id: string;
  rating: number;
  body: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * The rating as sent: a JSON number, or a decimal number as text ("4", " 4 ", "4.0"), read as that
 * number. `Number()` alone also read "0x5", "0b11", "5e0", ".5e1" and "4.99999999999999999" as ratings,
 * which are not the decimal whole number the field asks for; they go on as text and are refused.
 */
function ratingOf(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const digits = value.trim();
  return /^[0-9]+(?:\.0+)?$/.test(digits) ? Number(digits) : value;
}

export async function submitReview(deps: Deps, storeId: string, authorId: string, appId: string, body: ReviewBody) {
  const rating = ratingOf(body.rating);
  if (typeof rating !== 'number' || !Number.isInteger(rating) || rating < 1 || rating > 5) throw badRequest('rating must be a whole number from 1 to 5');
  const text = body.body ?? null;
  // Counted in characters (code points), as the schema's maxLength and the project's other texts
  // count them: `length` counts UTF-16 units, so 3,000 emoji were refused as "more than 5000 characters".
  if (text !== null && longerThan(text, MAX_BODY)) throw badRequest(`body must be at most ${MAX_BODY} characters`);
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
export async function reviewRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  const result = envelopeOf(ReviewResultSchema);
  admin.post('/apps/:appId/reviews', {
    schema: {
      tags: ['reviews'], summary: 'Review an app installed on the store (C10.8): 201 for the first review of the store, 200 when it replaces it',
      params: Type.Object({ appId: Type.String({ description: 'the app id (UUID); another value is not found' }) }), body: reviewBody,
      response: { 200: result, 201: result },
    },
  }, async (request, reply) => {
    const { created, ...data } = await submitReview(deps, adminStoreId(request), request.user!.id, request.params.appId, request.body);
    const status = created ? 201 : 200;
    return reply.code(status).send(envelope(data, status));
  });
}
