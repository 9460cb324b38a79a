// Emails as the platform keeps them (customers, orders, checkouts, accounts, PayPal payout
// methods): trimmed and lower-cased, at most MAX_EMAIL_CHARS characters as kept.
//
// The bound is on the kept form, not the sent one: lower-casing can lengthen text ('İ', U+0130,
// becomes 'i' + U+0307), so an email within the bound as sent could be stored past it, and a later
// writer that checks the bound (a checkout's completion creating the customer) refused with a 400
// what an earlier one had accepted.
import { longerThan } from './text.js';

/**
 * The longest email kept, in characters (code points): RFC 5321's path limit (256 octets less the
 * angle brackets). Unbounded, past about 2,700 bytes the unique index on lower(email) of accounts
 * could not hold the value, and a signup was a 500.
 */
export const MAX_EMAIL_CHARS = 254;

/** What the platform takes for an email: something, an @, something with a dot. */
export const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * `sent` as kept: trimmed and lower-cased. `tooLong` makes the caller's error (each surface has
 * its own shape) when the kept form is past MAX_EMAIL_CHARS.
 */
export function keptEmail(sent: string, tooLong: (max: number) => Error): string {
  const kept = emailKey(sent);
  if (longerThan(kept, MAX_EMAIL_CHARS)) throw tooLong(MAX_EMAIL_CHARS);
  return kept;
}

/**
 * The kept form of an email someone names (a GDPR request, the email log's filter), to look a kept
 * email up by: trimmed and lower-cased by JavaScript, as every writer keeps it. SQL's `lower()` of the
 * name is not that: PostgreSQL lower-cases 'İ' (U+0130) to a plain 'i' where JavaScript gives 'i' and
 * U+0307, and PGlite leaves letters that PostgreSQL lower-cases ('Ⓐ', U+24B6) as they are, so
 * `lower(email) = lower($1)` missed the customer whose email was named exactly as it was given, or
 * found it on one database and not on the other. `lower()` of a kept email is the email itself on
 * both databases, so `lower(email) = $key` (or `lower($key)`) finds it on both.
 */
export function emailKey(sent: string): string {
  return sent.trim().toLowerCase();
}
