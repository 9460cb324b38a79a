// App API products (C6.1): the list and one product. Create, update and delete are the store-data
// issue's; they will join this file's neighbours.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../api/app-api.js';
import { notFound, unprocessable } from '../http/errors.js';
import { linkHeader, parsePage } from '../http/paging.js';
import { isUuid } from '../ids.js';
import { productView } from './product-view.js';
import { findProduct, listProducts, PRODUCT_STATUSES } from './products.repo.js';

const tags = ['products'];
const security = [{ accessToken: [] }];

export async function productApiRoutes(api: FastifyInstance, { deps }: { deps: Deps }) {
  api.get('/products.json', {
    config: { scope: 'read_products', shape: 'errors' },
    schema: {
      tags, security, summary: 'List products, newest first (C6.1)',
      querystring: Type.Object({ page: Type.Optional(Type.String()), limit: Type.Optional(Type.String()), status: Type.Optional(Type.String()) }),
    },
  }, async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    if (query.status !== undefined && !(PRODUCT_STATUSES as readonly string[]).includes(query.status)) {
      throw unprocessable('status must be active, draft or archived', { status: ['must be active, draft or archived'] });
    }
    const page = parsePage(query);
    const { rows, hasNext } = await listProducts(deps.db, apiCaller(request).storeId, { status: query.status, limit: page.limit, offset: page.offset });
    const link = linkHeader(deps.config.baseUrl, '/api/v1/products.json', { status: query.status }, page, hasNext);
    if (link) reply.header('Link', link);
    return { products: rows.map(productView) };
  });

  api.get('/products/:id.json', {
    config: { scope: 'read_products', shape: 'errors' },
    schema: { tags, security, summary: 'One product by UUID or numeric id', params: Type.Object({ id: Type.String() }) },
  }, async (request) => {
    const { id } = request.params as { id: string };
    const product = isUuid(id) || /^\d{1,15}$/.test(id) ? await findProduct(deps.db, apiCaller(request).storeId, id) : null;
    if (!product) throw notFound('Product not found');
    return { product: productView(product) };
  });
}

/**
 * C6.9: the file endpoints are planned, not available: any request under /api/v1/files is a 404
 * envelope after authentication, whatever its method or body. The body is never parsed here, so the
 * planned multipart upload (no multipart parser exists) or a malformed JSON body gets the 404, not a
 * 400 about a body nothing would read. Registered as its own plugin, so the parser stays local.
 */
export async function fileApiRoutes(api: FastifyInstance) {
  api.removeAllContentTypeParsers();
  // Node discards an unread request body once the response is finished.
  api.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  const handler = async () => {
    throw notFound('The files endpoint is not available yet');
  };
  const documented = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];
  // Every other method Fastify routes (OPTIONS, TRACE, WebDAV...), hidden from OpenAPI, which has no
  // place for most of them; HEAD comes with GET.
  const others = api.supportedMethods.filter((m) => !documented.includes(m) && m !== 'HEAD');
  for (const url of ['/files.json', '/files', '/files/*']) {
    const config = { shape: 'envelope' as const };
    api.route({ method: documented, url, config, schema: { tags: ['files'], security, hide: url !== '/files.json' }, handler });
    api.route({ method: others, url, config, schema: { hide: true }, handler });
  }
}
