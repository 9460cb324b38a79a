// A create or update body may come flat (`{ "title": ... }`) or wrapped under its resource's key,
// REST-style (`{ "product": { "title": ... } }`): app-api.md shows both. A route says so with
// `config.bodyKey`; the wrapped form is unwrapped here, before validation, so that the route's one
// body schema (the flat form) checks both, and the reference documents both (src/http/openapi.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The key the body may be wrapped under (`product`); the wrapped form is used when that key holds an object. */
    bodyKey?: string;
  }
}

function unwrapBody(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
  const key = request.routeOptions.config.bodyKey!;
  const body: unknown = request.body; // not yet validated: this runs before the route's schema
  const inner = isPlainObject(body) ? body[key] : undefined;
  if (isPlainObject(inner)) request.body = inner;
  done();
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Gives every route with `config.bodyKey` the unwrapping step (others pay nothing for it). */
export function unwrapResourceBodies(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!route.config?.bodyKey) return;
    route.preValidation = [unwrapBody, ...([] as unknown[]).concat(route.preValidation ?? [])] as typeof route.preValidation;
  });
}
