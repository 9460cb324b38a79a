import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { envelope } from '../http/shapes.js';
import { callerStoreId } from '../http/user-auth.js';
import { createStaff, login, signup } from './accounts.service.js';

const signupBody = Type.Object({
  email: Type.String(),
  password: Type.String(),
  name: Type.String(),
  role: Type.Optional(Type.String({ description: 'MERCHANT (default) or PARTNER' })),
  storeName: Type.Optional(Type.String({ description: 'required for MERCHANT; creates the store' })),
});

/** `/auth/signup` and `/auth/login`: the public accounts surface. */
export async function accountRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  app.post('/auth/signup', { schema: { tags: ['accounts'], summary: 'Sign up (C2.1)', body: signupBody } }, async (request, reply) =>
    reply.code(201).send(envelope(await signup(deps, request.body as Record<string, unknown>), 201)),
  );

  app.post(
    '/auth/login',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Log in (C2.2)',
        description: 'Failed logins are throttled per account and per client address: 429 envelope with Retry-After (seconds).',
        body: Type.Object({ email: Type.String(), password: Type.String() }),
      },
    },
    async (request) => envelope(await login(deps, request.body as Record<string, unknown>, request.ip)),
  );
}

/** `POST /stores/staff`, registered in the store-staff surface: the store's owner only (C2.4). */
export async function staffRoutes(staff: FastifyInstance, { deps }: { deps: Deps }) {
  staff.post(
    '/stores/staff',
    { config: { roles: ['MERCHANT'] }, schema: { tags: ['accounts'], summary: 'Add store staff (C2.4)', body: signupBody } },
    async (request, reply) => reply.code(201).send(envelope(await createStaff(deps, callerStoreId(request), request.body as Record<string, unknown>), 201)),
  );
}
