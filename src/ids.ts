// UUID version 7 (RFC 9562): time-ordered, so `since_id` and "newest first" can compare ids (C5.3).
import { randomBytes, randomFillSync } from 'node:crypto';

let lastMs = 0;
let seq = 0;

// Random bytes are drawn from the CSPRNG 4 KB at a time and handed out 16 at a time: one call per
// 256 ids instead of two per id (each call costs far more than copying 16 bytes; ids are minted on
// every write path, several per checkout with functions).
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

function random16(): Buffer {
  if (poolAt + 16 > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  // A view, not a copy: the caller overwrites and encodes it at once, and these bytes are never handed out again.
  const bytes = pool.subarray(poolAt, poolAt + 16);
  poolAt += 16;
  return bytes;
}

export function uuidv7(nowMs: number = Date.now()): string {
  const bytes = random16();
  // Within one millisecond a 12-bit counter keeps ids from this process strictly increasing.
  if (nowMs <= lastMs) {
    nowMs = lastMs;
    seq = (seq + 1) & 0xfff;
    if (seq === 0) nowMs = ++lastMs;
  } else {
    lastMs = nowMs;
    // A random start (10 bits, from bytes the id overwrites below) leaves room to count up.
    seq = ((bytes[6] << 8) | bytes[7]) & 0x3ff;
  }
  bytes.writeUIntBE(nowMs, 0, 6);
  bytes[6] = 0x70 | (seq >> 8);
  bytes[7] = seq & 0xff;
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A UUIDv7 ordered after `after` (an id this generator made, or null): the current time's id when
 * that is already greater, else `after`'s millisecond and counter counted on by one. Ids of one
 * process only increase, but another process minting in the same millisecond draws its own counter
 * start, so its id can sort below one committed earlier. Orders take their id this way under the
 * store's order-number lock, so an order's id is greater than every order committed before it and
 * an app polling `since_id` (app-api.md, C5.3) never skips one.
 */
export function uuidv7After(after: string | null, nowMs: number): string {
  const id = uuidv7(nowMs);
  if (after === null || id > after.toLowerCase()) return id;
  const hex = after.replace(/-/g, '').toLowerCase();
  let ms = parseInt(hex.slice(0, 12), 16);
  let counter = parseInt(hex.slice(13, 16), 16) + 1;
  if (counter > 0xfff) {
    counter = 0;
    ms += 1;
  }
  const bytes = Buffer.from(id.replace(/-/g, ''), 'hex');
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  const out = bytes.toString('hex');
  return `${out.slice(0, 8)}-${out.slice(8, 12)}-${out.slice(12, 16)}-${out.slice(16, 20)}-${out.slice(20)}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** URL-safe random token with a readable prefix, e.g. `svcat_...` for access tokens. */
export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}
