// The checkout token (C15.1): the buyer's only key to a checkout, so a bearer secret. 256 random
// bits, shown once (in the create response and the URLs the buyer's browser keeps); the database
// keeps only its SHA-256, looked up by index and then compared in constant time, so neither a
// database read nor response timing gives a usable token away.
import { createHash, randomBytes } from 'node:crypto';
import { safeEqual } from '../crypto.js';

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function newCheckoutToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashCheckoutToken(token) };
}

export function hashCheckoutToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A string that could be a token at all (anything else is not found without a query). */
export const isCheckoutTokenShape = (token: string) => TOKEN_SHAPE.test(token);

export const sameTokenHash = (a: string, b: string) => safeEqual(a, b);
