// A customer's name and phone as one stored customer keeps them (app-api.md Customer): shared by the
// customers service, the order views and the checkout's new customer, which need these rules and
// nothing else of the customers service.

/** A customer's phone, in characters. */
export const CUSTOMER_PHONE_MAX = 64;

/**
 * The stored name split back into first and last: the first word is the first name, the rest the
 * last name ("Ada King Lovelace" -> "Ada" / "King Lovelace"). Lossy for multi-word first names,
 * which one combined name cannot tell apart (docs/decisions.md).
 */
export function splitName(name: string): { first_name: string | null; last_name: string | null } {
  const text = name.trim();
  if (!text) return { first_name: null, last_name: null };
  const space = text.search(/\s/);
  if (space < 0) return { first_name: text, last_name: null };
  return { first_name: text.slice(0, space), last_name: text.slice(space).trim() || null };
}

export function joinName(first: string | null | undefined, last: string | null | undefined): string {
  return [first, last].map((p) => (p ?? '').trim()).filter(Boolean).join(' ');
}
