// The database statements a piece of work makes, as a test counts them (a quote's round trips, a
// rate choice that must read nothing of the store again).
import { vi } from 'vitest';
import type { Db, QueryOptions } from '../../src/db/db.js';

export interface SeenStatement {
  /** The statement's name, or the start of its SQL when unnamed. */
  name: string;
  params: unknown[];
}

/** Every `db.query` that `fn` makes, in order. */
export async function statementsOf(db: Db, fn: () => Promise<unknown>): Promise<SeenStatement[]> {
  const seen: SeenStatement[] = [];
  const original = db.query.bind(db);
  const spy = vi.spyOn(db, 'query').mockImplementation(((sql: string, params?: unknown[], options?: QueryOptions) => {
    seen.push({ name: options?.name ?? sql.trim().slice(0, 60), params: params ?? [] });
    return original(sql, params, options);
  }) as typeof db.query);
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return seen;
}
