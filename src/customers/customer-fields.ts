// A customer's name and phone as one stored customer keeps them (app-api.md Customer): shared by the
// customers service, the order views and the checkout's new customer, which need these rules and
// nothing else of the customers service.

/** A customer's phone, in characters. */
export const CUSTOMER_PHONE_MAX = 64;

/**
 * A customer's name as stored: the one combined `name` (first and last joined by a space), and
 * where the first name ends in it, in code points (`first_name_length`; 0 when there is no first
 * name). Code points, not UTF-16 units, so that SQL's `left(name, first_name_length)` cuts at the
 * same place. Null for the rows written before the length was kept (migration 0030): they are split
 * at the first space, as they always were.
 */
export interface StoredName {
  name: string;
  first_name_length?: number | null;
}

/**
 * The first and last name, trimmed, as the one stored name and where its first name ends. The only
 * builder of a customer's stored name: every writer (the App API create and update, the merchant
 * admin, an order or a checkout creating its customer) comes through `applyPatch`
 * (customers.service.ts), which calls this.
 */
export function storedName(first: string | null | undefined, last: string | null | undefined): { name: string; firstNameLength: number } {
  const f = (first ?? '').trim();
  const l = (last ?? '').trim();
  return { name: [f, l].filter(Boolean).join(' '), firstNameLength: [...f].length };
}

/**
 * The stored name split back into first and last, exactly as they were given when the row keeps
 * where the first name ends ("Mary Ann" + "Smith"; a last name alone stays a last name). A row
 * without it (written before, or a name set by SQL alone) is split at the first whitespace: the
 * first word is the first name, the rest the last name ("Ada King Lovelace" -> "Ada" / "King
 * Lovelace"). A plain string (an order address's `clientName`) is split that way too.
 */
export function splitName(stored: string | StoredName): { first_name: string | null; last_name: string | null } {
  const { name, first_name_length: length } = typeof stored === 'string' ? { name: stored, first_name_length: null } : stored;
  if (length !== null && length !== undefined) {
    const chars = [...name];
    // `storedName` puts the first name, then a space before the last name: a length that does not
    // land there belongs to another name (one rewritten by SQL alone), so the old rule decides.
    if (length === 0 || length === chars.length || (length < chars.length && chars[length] === ' ')) {
      return { first_name: chars.slice(0, length).join('') || null, last_name: chars.slice(length).join('').trim() || null };
    }
  }
  const text = name.trim();
  if (!text) return { first_name: null, last_name: null };
  const space = text.search(/\s/);
  if (space < 0) return { first_name: text, last_name: null };
  return { first_name: text.slice(0, space), last_name: text.slice(space).trim() || null };
}
