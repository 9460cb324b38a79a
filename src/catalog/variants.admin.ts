// `PATCH /variants/update-single-variant/{id}` (app-api.md merchant routes; C7.3, C14.2): a
// multipart form (a JSON body is accepted too) whose fields are all optional, with the image file
// `mainImage`. Roles MERCHANT, STAFF_ADMIN, SUPER_ADMIN, MANAGER (the merchant admin gate). Errors
// are envelopes; an unknown variant is a 400 "Variant not found".
import type { FastifyInstance, FastifyRequest, FastifySchema, FastifySchemaCompiler } from 'fastify';
import multipart from '@fastify/multipart';
import { Type, type Static } from 'typebox';
import type { Deps } from '../deps.js';
import { assertStoreAccess } from '../surfaces/merchant-admin.js';
import { AppError, badRequest } from '../http/errors.js';
import { assertCleanPart } from '../http/input-guard.js';
import { envelopeOf } from '../http/schemas.js';
import { envelope } from '../http/shapes.js';
import { typed } from '../http/typed.js';
import { MERCHANT_ROLES } from '../http/user-auth.js';
import { compileValidator } from '../http/validation.js';
import { FieldErrors, isCatalogId, unwrap, type Body } from './input.js';
import { variantFields, variantFieldSchemas } from './products.input.js';
import { updateVariantRecord } from './products.service.js';
import { lockProduct } from './products.repo.js';
import { assertSchemaPassed } from './reader-first.js';
import { discard, keepImage, MAX_IMAGE_BYTES, stageUpload, type StagedFile } from './uploads.js';
import { releaseUploads, storeUploadDir } from './upload-references.js';
import { findVariantAnyStore, VariantRecordSchema, variantRecord } from './variants.repo.js';

const variantNotFound = () => badRequest('Variant not found');

/** Limits of the form: one image of at most 20 MB, a few short text fields. */
const LIMITS = { fileSize: MAX_IMAGE_BYTES, files: 4, fields: 50, parts: 60, fieldSize: 64 * 1024, fieldNameSize: 100 };

/**
 * The JSON body: the variant's fields. It may also come wrapped as `{ variant: { ... } }` (read by
 * the same rules in `variantFields`); `variant` is then the only key read, and one that holds no
 * object is ignored like any unknown key, so the schema does not constrain it.
 */
const jsonBody = Type.Object(variantFieldSchemas, { description: 'All optional; flat, or wrapped as `{ variant: { ... } }` with the same fields' });

/** The multipart form, as text fields and one file; read by `readForm` and `variantFields`, not by a schema. */
const formBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 255 })),
  value: Type.Optional(Type.String({ maxLength: 255 })),
  price: Type.Optional(Type.String({ description: 'decimal text from 0, at most two decimals' })),
  discountPrice: Type.Optional(Type.String({ description: 'decimal text from 0, at most two decimals; "" clears it' })),
  stock: Type.Optional(Type.String({ pattern: '^\\s*\\d+\\s*$', description: 'a whole number from 0' })),
  stockStatus: Type.Optional(Type.String({ maxLength: 50, pattern: '^[A-Za-z_]+$', description: 'e.g. IN_STOCK' })),
  skuId: Type.Optional(Type.String({ maxLength: 255, description: '"" clears it' })),
  weight: Type.Optional(Type.String({ description: 'a number from 0; "" clears it' })),
  weightUnit: Type.Optional(Type.String({ enum: ['g', 'kg', 'lb', 'oz', ''], description: 'g, kg, lb or oz; "" clears it' })),
  mainImageUrl: Type.Optional(Type.String({ description: 'an http or https URL; "" clears it' })),
  mainImage: Type.Optional(Type.String({ format: 'binary', description: 'the image file: jpg, jpeg, png, gif or webp (by its bytes), at most 20 MB; other file fields are ignored' })),
}, { description: 'All optional; every field is text; at most 50 fields of 64 KiB' });

/**
 * The JSON body is validated by its schema; the multipart form is not a value a schema can see
 * (the handler streams it, `request.body` stays empty): its schema documents it, and `readForm`
 * with `variantFields` checks it.
 */
const validatorCompiler: FastifySchemaCompiler<FastifySchema> = (route) =>
  route.httpPart === 'body' && route.contentType === 'multipart/form-data' ? () => true : compileValidator(route);

interface Form {
  fields: Body;
  image: StagedFile | null;
}

/**
 * Reads the multipart form: text fields as strings, the first `mainImage` file staged on disk; any
 * other file is read and dropped (unknown body keys are ignored, app-api.md Conventions 4).
 */
async function readForm(deps: Deps, request: FastifyRequest): Promise<Form> {
  const form: Form = { fields: {}, image: null };
  try {
    const parts = parseOrThrow(() => request.parts());
    for (;;) {
      const next = await parseOrThrow(() => parts.next());
      if (next.done) break;
      const part = next.value;
      if (part.type === 'file') {
        if (part.fieldname === 'mainImage' && !form.image) {
          const staged = await stageUpload(deps.config, part.file);
          // A browser form with no file chosen sends an empty part with an empty file name.
          if (staged.size === 0 && !part.filename) await discard(staged.path);
          else form.image = staged;
        } else {
          part.file.resume();
          await new Promise((done) => part.file.once('end', done).once('close', done));
        }
      } else {
        if (part.valueTruncated || part.fieldnameTruncated) throw badRequest(`${part.fieldname} is too long`);
        // Text fields are checked as JSON bodies are (src/http/input-guard.ts): no NUL, no lone surrogate.
        assertCleanPart({ [part.fieldname]: part.value }, 'body');
        form.fields[part.fieldname] = part.value;
      }
    }
  } catch (err) {
    if (form.image) await discard(form.image.path);
    throw err;
  }
  return form;
}

/**
 * Errors of the multipart parser are the client's: a body that is not well-formed multipart is a
 * 400, not a 500. (The library's own limit errors carry a 4xx status and are rendered as 400s.)
 */
function parseOrThrow<T>(step: () => T): T {
  const asClientError = (err: unknown) => {
    const status = (err as { statusCode?: number }).statusCode;
    return err instanceof AppError || (status !== undefined && status >= 400 && status < 500) ? err : badRequest('Malformed multipart body');
  };
  try {
    const result = step();
    if (result instanceof Promise) return result.catch((err) => Promise.reject(asClientError(err))) as T;
    return result;
  } catch (err) {
    throw asClientError(err);
  }
}

export async function variantAdminRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  // Only this plugin parses multipart bodies (registered here, encapsulated).
  // An oversized image is truncated at the limit and reported here as a 400 (keepImage), rather than
  // as the library's 413.
  await admin.register(multipart, { limits: LIMITS, throwFileSizeLimit: false });

  admin.patch('/variants/update-single-variant/:id', {
    config: { roles: MERCHANT_ROLES },
    // The variant is found (400 "Variant not found", 403 another store's) before the body is judged
    // (src/catalog/reader-first.ts).
    attachValidation: true,
    validatorCompiler,
    schema: {
      tags: ['merchant admin: catalog'],
      summary: 'Update one variant; multipart with optional image mainImage (jpg, jpeg, png, gif, webp; at most 20 MB)',
      description: 'Fields, all optional: name, value, price, discountPrice, stock, stockStatus, skuId, weight, weightUnit (g, kg, lb, oz), file mainImage. `{id}` is the varientId (UUID) or the numeric variant id. Emits products/update, and inventory_levels/update when the stock changes.',
      params: Type.Object({ id: Type.String({ description: 'the varientId (UUID) or the numeric variant id' }) }),
      // Typed as the JSON body: the multipart form never reaches `request.body`.
      body: Type.Unsafe<Static<typeof jsonBody> | null>({
        content: { 'multipart/form-data': { schema: formBody }, 'application/json': { schema: jsonBody } },
      }),
      response: { 200: envelopeOf(VariantRecordSchema) },
    },
  }, async (request) => {
    const { id } = request.params;
    const found = isCatalogId(id) ? await findVariantAnyStore(deps.db, id) : null;
    if (!found) throw variantNotFound();
    assertStoreAccess(request, found.store_id);

    const form: Form = request.isMultipart() ? await readForm(deps, request) : { fields: unwrap(request.body, 'variant'), image: null };
    let stored: { url: string; path: string } | null = null;
    try {
      const errors = new FieldErrors();
      const fields = variantFields(errors, form.fields, '');
      errors.check();
      assertSchemaPassed(request); // a JSON body the schema refused and the reader let through
      if (form.image) {
        stored = await keepImage(deps.config, form.image, 'mainImage', storeUploadDir(found.store_id));
        form.image = null;
        fields.main_image_url = stored.url;
      }
      const after = await deps.db.transaction(async (tx) => {
        // The product first, then the variant: the order a product update with variants takes
        // (updateProduct). Variant first would deadlock against it, since writing the variant also
        // writes its product row (its cached variants, migration 0008).
        await lockProduct(tx, found.product_id);
        const variant = await findVariantAnyStore(tx, found.id, { lock: true });
        if (!variant) throw variantNotFound(); // deleted meanwhile
        const after = await updateVariantRecord(tx, variant, fields, deps.clock.now());
        // A replaced or cleared image of this store's uploads goes (after the grace, by the
        // upload-purge job) when nothing else of the store (a product's images, another variant)
        // still shows it.
        const dropped = variant.main_image_url !== after.main_image_url ? [variant.main_image_url] : [];
        await releaseUploads(tx, deps.config, variant.store_id, dropped, deps.clock.now());
        return after;
      });
      return envelope(variantRecord(after));
    } catch (err) {
      if (form.image) await discard(form.image.path);
      if (stored) await discard(stored.path);
      throw err;
    }
  });
}
