// Text PostgreSQL can store, as text and inside jsonb: no NUL (U+0000; refused in text, 22021, and
// in jsonb, 22P05) and no unpaired UTF-16 surrogate (not a Unicode character: jsonb refuses it,
// 22P02, and UTF-8 for a text column silently turns it into U+FFFD). One rule for everything that
// reaches the database: what clients send (src/http/input-guard.ts refuses it with a 400) and what
// third parties answer, which the platform keeps as records (webhook receivers' response bodies,
// shipping apps' rate replies, function outputs and error messages). A single unstorable string in
// a batched write fails the whole batch, other apps' records with it.
//
// Here, in the function runtime (which imports nothing from the rest of the service), so that the
// runtime's own output check and the app SDK's local runs apply the very same rule.

import { childPath } from './field-path.js';

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** Whether the string can be stored as text and inside jsonb. */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/**
 * The string with each NUL and each unpaired surrogate replaced by U+FFFD (the replacement
 * character), the same length: for text kept as a record of what a third party said.
 */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, '\ufffd') : text;
}

/** The first thing in a JSON value that cannot be stored, or that nests too deeply. */
export interface UnstorableAt {
  /**
   * Where, as messages name it: the string's place (`output.operations[0].rename.title`), the
   * key's object followed by " key" (`output.operations[0] key`), or the too-deep container.
   */
  path: string;
  problem: 'text' | 'key' | 'depth';
}

/**
 * The first problem in a JSON value, in document order: an unstorable string or object key, or
 * (with `maxDepth`) an object or array nested `maxDepth` levels below the value. One walk for client
 * input (src/http/input-guard.ts) and for what the platform keeps of third parties (function
 * outputs). Iterative, so depth cannot overflow it, and a path is spelled out only for the node
 * returned: a clean value, which is nearly every value, costs no strings. Byte arrays (a multipart
 * file's content) are not text and are passed over.
 */
export function firstUnstorable(value: unknown, root: string, maxDepth = Infinity): UnstorableAt | null {
  // The containers entered so far: each one's own container (-1 for the value itself) and its step there.
  const owners: number[] = [];
  const stepsTo: Array<string | number | null> = [];
  // The walk's stack, as parallel arrays: a value, its depth, the container holding it (-1 for
  // none: the value itself) and its step in that container.
  const values: unknown[] = [value];
  const depths: number[] = [0];
  const holders: number[] = [-1];
  const steps: Array<string | number | null> = [null];
  const pathTo = (holder: number, step: string | number | null): string => {
    const trail: Array<string | number> = step === null ? [] : [step];
    for (let c = holder; c !== -1; c = owners[c]) if (stepsTo[c] !== null) trail.push(stepsTo[c]!);
    let path = root;
    for (let i = trail.length - 1; i >= 0; i--) path = childPath(path, trail[i]);
    return path;
  };
  while (values.length) {
    const v = values.pop();
    const depth = depths.pop()!;
    const holder = holders.pop()!;
    const step = steps.pop()!;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return { path: pathTo(holder, step), problem: 'text' };
      continue;
    }
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) continue;
    if (depth >= maxDepth) return { path: pathTo(holder, step), problem: 'depth' };
    const self = owners.push(holder) - 1;
    stepsTo.push(step);
    // Children are pushed last first, so that they come off the stack in document order.
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        values.push(v[i]);
        depths.push(depth + 1);
        holders.push(self);
        steps.push(i);
      }
      continue;
    }
    const keys = Object.keys(v);
    for (const key of keys) if (!isStorableText(key)) return { path: `${pathTo(holder, step)} key`, problem: 'key' };
    for (let i = keys.length - 1; i >= 0; i--) {
      values.push((v as Record<string, unknown>)[keys[i]]);
      depths.push(depth + 1);
      holders.push(self);
      steps.push(keys[i]);
    }
  }
  return null;
}

/**
 * Where in a JSON value (`output.operations[0].rename.title`, `... key` for an object key) the first
 * unstorable string is, or null when there is none.
 */
export function unstorableTextAt(value: unknown, root: string): string | null {
  return firstUnstorable(value, root)?.path ?? null;
}
