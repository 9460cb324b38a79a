// The catalog and metafield routes, grouped by the surface they are registered on (src/app.ts):
// App API (inside the /api/v1 gate), merchant admin (inside its gate), and the root (uploaded files,
// and the metafield read with its own authentication, C14.7). Products' list/get/create/update/
// delete on the App API are registered by app.ts itself (productApiRoutes).
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { metafieldAdminRoutes, metafieldApiRoutes, metafieldReadRoutes } from '../metafields/metafields.routes.js';
import { collectionAdminRoutes, collectionApiRoutes } from './collections.routes.js';
import { productListingApiRoutes } from './product-listings.api.js';
import { productAdminRoutes } from './products.admin.js';
import { uploadRoutes } from './uploads.js';
import { variantAdminRoutes } from './variants.admin.js';

type Opts = { deps: Deps };

export async function catalogApiRoutes(api: FastifyInstance, { deps }: Opts) {
  await api.register(collectionApiRoutes, { deps });
  await api.register(productListingApiRoutes, { deps });
  await api.register(metafieldApiRoutes, { deps });
}

export async function catalogAdminRoutes(admin: FastifyInstance, { deps }: Opts) {
  await admin.register(productAdminRoutes, { deps });
  await admin.register(collectionAdminRoutes, { deps });
  await admin.register(variantAdminRoutes, { deps });
  await admin.register(metafieldAdminRoutes, { deps });
}

export async function catalogRootRoutes(app: FastifyInstance, { deps }: Opts) {
  await app.register(uploadRoutes, { deps });
  await app.register(metafieldReadRoutes, { deps });
}
