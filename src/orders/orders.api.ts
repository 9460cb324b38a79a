// App API orders (app-api.md `GET /api/v1/orders.json`, `GET /api/v1/orders/{id}.json`; scope
// read_orders): bare bodies, errors in the errors body (C5.1), list paging in the `Link` header with
// the filters carried along (C5.4). Another store's order is simply not found (404).
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { notFound, unprocessable } from '../http/errors.js';
import { linkHeader, parsePage, MAX_LIMIT } from '../http/paging.js';
import { pagedQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { isUuid } from '../ids.js';
import { orderListView, orderView } from './order-view.js';
import { metafieldsFor } from './order-metafields.js';
import { OrderListItemSchema, OrderSchema } from './order-schema.js';
import { findOrder, listOrders, type OrderListFilter } from './orders.repo.js';

const tags = ['orders'];

/** C7.2: the App API filter value -> the merchant statuses it selects. */
export const STATUS_FILTER: Record<string, string[]> = {
  pending: ['pending'],
  confirmed: ['confirmed'],
  processing: ['paid', 'partial'],
  shipped: ['shipped'],
  delivered: ['delivered'],
  cancelled: ['canceled'],
};

const invalid = (field: string, problem: string) => unprocessable(`${field} ${problem}`, { [field]: [problem] });

/**
 * The list's query: the paging of C5.4 and the filters. The filters stay plain strings (blank reads
 * as absent); `readListFilter` checks them, because a bad value is a 422 here (C7.2), not the 400
 * of a failed schema.
 */
export const OrderListQuery = pagedQuery({
  status: Type.Optional(Type.String({ description: 'pending, confirmed, processing (paid or partial), shipped, delivered or cancelled (C7.2); another value -> 422' })),
  since_id: Type.Optional(Type.String({ description: 'only orders whose id (UUID v7) is greater (C5.3); not an order id -> 422' })),
  ids: Type.Optional(Type.String({ description: `comma-separated order ids, at most ${MAX_LIMIT}; another value -> 422` })),
});
type ListFilterQuery = Pick<Static<typeof OrderListQuery>, 'status' | 'since_id' | 'ids'>;

/** The list's filters from the query; a value outside what each accepts is a 422. */
export function readListFilter(query: ListFilterQuery): { filter: OrderListFilter; carried: Record<string, string> } {
  const filter: OrderListFilter = {};
  const carried: Record<string, string> = {};
  const one = (key: keyof ListFilterQuery) => query[key]?.trim() ?? '';
  const status = one('status');
  if (status) {
    const statuses = Object.hasOwn(STATUS_FILTER, status) ? STATUS_FILTER[status] : undefined;
    if (!statuses) throw invalid('status', `must be one of ${Object.keys(STATUS_FILTER).join(', ')}`);
    filter.statuses = statuses;
    carried.status = status;
  }
  const since = one('since_id');
  if (since) {
    if (!isUuid(since)) throw invalid('since_id', 'must be an order id');
    filter.sinceId = since.toLowerCase();
    carried.since_id = since;
  }
  const ids = one('ids');
  if (ids) {
    const list = [...new Set(ids.split(',').map((s) => s.trim()).filter(Boolean))];
    if (!list.every(isUuid)) throw invalid('ids', 'must be a comma-separated list of order ids');
    if (list.length > MAX_LIMIT) throw invalid('ids', `names more than ${MAX_LIMIT} orders`);
    if (list.length) {
      filter.ids = list.map((s) => s.toLowerCase());
      carried.ids = list.join(',');
    }
  }
  return { filter, carried };
}

export async function orderApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const api = typed(instance);
  const read = { scope: 'read_orders', shape: 'errors' } as const;

  api.get('/orders.json', {
    config: { ...read, pagedByLink: true, errors: { 422: 'status, since_id or ids is not a value the list accepts (app-api.md Status codes, C7.2)' } },
    schema: {
      tags,
      summary: 'Orders, newest first, in the list view; paging in the Link header (C5.4)',
      querystring: OrderListQuery,
      response: { 200: Type.Object({ orders: Type.Array(OrderListItemSchema) }) },
    },
  }, async (request, reply) => {
    const { filter, carried } = readListFilter(request.query);
    const page = parsePage(request.query);
    const { rows, hasNext } = await listOrders(deps.db, apiCaller(request).storeId, filter, page);
    const link = linkHeader(deps.config.baseUrl, '/api/v1/orders.json', carried, page, hasNext);
    if (link) reply.header('Link', link);
    return { orders: rows.map(orderListView) };
  });

  api.get('/orders/:id.json', {
    config: read,
    schema: {
      tags, summary: 'One order, every field',
      params: Type.Object({ id: Type.String({ description: 'order id (UUID)' }) }),
      response: { 200: Type.Object({ order: OrderSchema }) },
    },
  }, async (request) => {
    const { id } = request.params;
    const row = isUuid(id) ? await findOrder(deps.db, apiCaller(request).storeId, id) : null;
    if (!row) throw notFound('Order not found');
    return { order: orderView(row, deps.config.baseUrl, metafieldsFor(apiCaller(request).scopes)) };
  });
}
