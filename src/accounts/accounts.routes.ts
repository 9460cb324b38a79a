import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf, Id, nullable, StringEnum } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { callerStoreId } from '../http/user-auth.js';
import { ROLES } from './jwt.js';
import { createStaff, login, signup } from './accounts.service.js';
import { noStore } from '../surfaces/no-store.js';

const tags = ['accounts'];

// The services check each field's rule (a valid email, 8 characters of password, the roles a
// route allows) in the words C2 gives; the schemas say what each field is.
const signupBody = Type.Object({
  email: Type.String({ description: 'an email address; stored lower-cased' }),
  password: Type.String({ description: 'at least 8 characters' }),
  name: Type.String(),
  role: Type.Optional(Type.String({ description: 'MERCHANT (default) or PARTNER; for staff: STAFF_ADMIN or MANAGER' })),
  storeName: Type.Optional(Type.String({ description: 'required for MERCHANT; creates the store' })),
});

export const PublicUserSchema = Type.Object({ id: Id(), email: Type.String(), name: Type.String(), role: StringEnum(ROLES) });
const PublicStoreSchema = Type.Object({ id: Id(), business: Type.String(), storeURL: Type.String({ description: "the store's slug" }) });
const SessionSchema = Type.Object({
  token: Type.String({ description: 'a platform JWT (C2.3)' }),
  user: PublicUserSchema,
  store: nullable(PublicStoreSchema, { description: 'null for an account without a store (PARTNER)' }),
});

/** `/auth/signup` and `/auth/login`: the public accounts surface. */
export async function accountRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  noStore(instance); // platform JWTs
  const app = typed(instance);
  app.post('/auth/signup', {
    config: { errors: { 409: 'The email is already registered' } },
    schema: { tags, summary: 'Sign up (C2.1)', body: signupBody, response: { 201: envelopeOf(SessionSchema) } },
  }, async (request, reply) => reply.code(201).send(envelope(await signup(deps, request.body), 201)));

  app.post('/auth/login', {
    config: { errors: { 401: 'The email or password is wrong', 429: 'Too many failed logins; `Retry-After` says when to try again' } },
    schema: {
      tags,
      summary: 'Log in (C2.2)',
      description: 'Failed logins are throttled per account and per client address: 429 envelope with Retry-After (seconds).',
      body: Type.Object({ email: Type.String(), password: Type.String() }),
      response: { 200: envelopeOf(SessionSchema) },
    },
  }, async (request) => envelope(await login(deps, request.body, request.ip)));
}

/** `POST /stores/staff`, registered in the store-staff surface: the store's owner only (C2.4). */
export async function staffRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const staff = typed(instance);
  staff.post('/stores/staff', {
    config: { roles: ['MERCHANT'], errors: { 409: 'The email is already registered' } },
    schema: {
      tags, summary: 'Add store staff (C2.4)', body: signupBody,
      response: { 201: envelopeOf(Type.Object({ user: Type.Object({ ...PublicUserSchema.properties, storeId: Id('the store') }) })) },
    },
  }, async (request, reply) => reply.code(201).send(envelope(await createStaff(deps, callerStoreId(request), request.body), 201)));
}
