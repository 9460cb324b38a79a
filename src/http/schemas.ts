// Schema parts every area shares (issue 11 section 1): the response bodies of C5.1 around a
// resource, envelope paging, and the small field types that recur (ids, money, timestamps). A
// route's schemas are the one description of its request and response: Fastify validates the
// request with them (src/http/validation.ts), serialises the response through them
// (src/http/serialization.ts), the type provider types the handler from them (src/http/typed.ts),
// and the API reference is generated from them.
import { Type, type Static, type TObject, type TSchema } from 'typebox';

/**
 * `schema` or null, written as a type list (`type: ['string', 'null']`) rather than `anyOf`: the
 * compiled serialiser handles a type list inline, while an `anyOf` makes it validate every value
 * to pick a branch, which costs more than the rest of the response. Keeps the static type.
 */
export function nullable<T extends TSchema>(schema: T, options: Record<string, unknown> = {}) {
  const raw = schema as unknown as { type?: string | string[]; enum?: unknown[] };
  if (typeof raw.type !== 'string') throw new Error('nullable(): the schema needs a single `type`');
  const out: Record<string, unknown> = { ...(schema as object), ...options, type: [raw.type, 'null'] };
  if (raw.enum) out.enum = [...raw.enum, null];
  return Type.Unsafe<Static<T> | null>(out);
}

/**
 * One of a closed set of strings, as `{ type: 'string', enum }` (a union of literals would be an
 * `anyOf`, slow to serialise); its static type is the union of the values.
 */
export function StringEnum<const V extends readonly string[]>(values: V, options: Record<string, unknown> = {}) {
  return Type.Unsafe<V[number]>({ ...options, type: 'string', enum: [...values] });
}

/** A UUID id. */
export const Id = (description = 'id (UUID)') => Type.String({ description });

/** A decimal amount as the API writes it: a string with two decimals (C5.2), e.g. `"19.90"`. */
export const Money = (description = 'decimal string, e.g. "19.90" (C5.2)') => Type.String({ description });

/** An ISO 8601 timestamp as the API writes it. */
export const Timestamp = (description = 'ISO 8601 date-time') => Type.String({ description });

/** A whole number >= 1 as a query parameter; another value falls back to the default (C5.4). */
const pageNumber = (description: string) =>
  Type.Union([Type.Integer({ minimum: 1 }), Type.String()], { description: `${description}; a value that is not a whole number from 1 falls back to the default` });

/**
 * `page` and `limit`, the one paging query of both kinds of list: envelope lists (C5.3,
 * `pagination` in the body) and bare-body lists (C5.4, the `Link` header). Read with `parsePage`.
 */
export const PagingQuery = Type.Object({
  page: Type.Optional(pageNumber('page number, from 1 (default 1)')),
  limit: Type.Optional(pageNumber('results per page (default 50, at most 250; a larger value is clamped)')),
});

/**
 * The paging query with a route's own filters: `pagedQuery({ status: Type.Optional(...) })`. A
 * filter sent blank (`?status=`, or only spaces: what a form's "All" choice sends) is no filter,
 * on every list alike: its key is dropped before validation (validation.ts, `x-blank-is-absent`).
 */
export function pagedQuery<P extends Record<string, TSchema>>(filters: P) {
  return withFilters(Type.Object({ ...PagingQuery.properties, ...filters }), Object.keys(filters));
}

/**
 * A list's query whose `filters` count as not sent when blank (see `pagedQuery`). Each filter says
 * so in its own schema too, an OpenAPI extension, so the API reference shows it per parameter.
 */
export function withFilters<T extends TObject>(query: T, filters: string[]): T {
  const properties = { ...query.properties };
  for (const key of filters) properties[key] = { ...properties[key], [BLANK_IS_ABSENT]: true };
  return { ...query, properties, [BLANK_IS_ABSENT]: filters };
}

/** The query schema's list of filters a blank value leaves out; `true` on each filter's own schema. */
export const BLANK_IS_ABSENT = 'x-blank-is-absent';

const Pagination = Type.Object({
  page: Type.Integer(),
  limit: Type.Integer(),
  totalPages: Type.Integer(),
  resultCount: Type.Integer(),
  totalResult: Type.Integer(),
});

/** The standard envelope (C5.1) around `data`, for a success. */
export function envelopeOf<T extends TSchema>(data: T, description?: string) {
  return Type.Object(
    {
      status: Type.Integer(),
      state: Type.Literal('success'),
      message: Type.Null(),
      data,
      count: Type.Null(),
      pagination: Type.Null(),
    },
    description ? { description } : {},
  );
}

/** The standard envelope of a paged list (C5.3): `count` and `pagination` filled. */
export function envelopeListOf<T extends TSchema>(data: T, description?: string) {
  return Type.Object(
    {
      status: Type.Integer(),
      state: Type.Literal('success'),
      message: Type.Null(),
      data,
      count: Type.Integer(),
      pagination: Pagination,
    },
    description ? { description } : {},
  );
}

/** The empty bare body `{}` of a delete (C6). */
export const EmptyBody = Type.Object({}, { additionalProperties: false, description: 'An empty object' });
