// UUID version 7 (RFC 9562): time-ordered, so `since_id` and "newest first" can compare ids (C5.3).
import { randomBytes } from 'node:crypto';

let lastMs = 0;
let seq = 0;

export function uuidv7(nowMs: number = Date.now()): string {
  // Within one millisecond a 12-bit counter keeps ids from this process strictly increasing.
  if (nowMs <= lastMs) {
    nowMs = lastMs;
    seq = (seq + 1) & 0xfff;
    if (seq === 0) nowMs = ++lastMs;
  } else {
    lastMs = nowMs;
    seq = randomBytes(2).readUInt16BE(0) & 0x3ff;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(nowMs, 0, 6);
  bytes[6] = 0x70 | (seq >> 8);
  bytes[7] = seq & 0xff;
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** URL-safe random token with a readable prefix, e.g. `svcat_...` for access tokens. */
export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}
