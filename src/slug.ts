/** The longest slug `slugify` makes. */
export const MAX_SLUG_CHARS = 60;

/** Lowercase letters, digits and `-` (C2.5, C14.9): "Acc Shipping Helper x1" -> "acc-shipping-helper-x1". */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG_CHARS)
    // The cut may end on a separator: "-" is between words only.
    .replace(/-+$/, '');
}
