// Paging for both kinds of list: envelope lists (page/limit plus `pagination`) and bare-body lists
// (page/limit plus the RFC 5988 `Link` header of C5.4).

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 250;

export interface Page {
  page: number;
  limit: number;
  offset: number;
}

/** A whole number >= 1 (fractions floored; Infinity kept so that callers clamp it), else null. */
function positiveInt(value: unknown): number | null {
  if (value === undefined || value === null || value === '') return null;
  const n = Number(value);
  return n >= 1 ? Math.floor(n) : null; // NaN fails the comparison
}

/**
 * Missing or invalid values fall back to the defaults; a large limit is clamped silently. A page so
 * large that its offset would leave the safe-integer range is clamped too: it is an empty page
 * either way, and an offset like 5e21 would reach SQL in exponent notation and fail as a 500.
 */
export function parsePage(query: Record<string, unknown>, defaults: { limit?: number; max?: number } = {}): Page {
  const limit = Math.min(positiveInt(query.limit) ?? defaults.limit ?? DEFAULT_LIMIT, defaults.max ?? MAX_LIMIT);
  const page = Math.min(positiveInt(query.page) ?? 1, Math.floor(Number.MAX_SAFE_INTEGER / limit));
  return { page, limit, offset: (page - 1) * limit };
}

/**
 * `<{base}{path}?page=N&limit=L&...>; rel="next"` while more results exist, `rel="previous"` when
 * page > 1; filters are carried along. Null when the list fits on one page.
 */
export function linkHeader(baseUrl: string, path: string, query: Record<string, unknown>, page: Page, hasNext: boolean): string | null {
  const links: string[] = [];
  const url = (n: number) => {
    const params = new URLSearchParams();
    params.set('page', String(n));
    params.set('limit', String(page.limit));
    for (const [key, value] of Object.entries(query)) {
      if (key === 'page' || key === 'limit' || value === undefined || value === null || value === '') continue;
      params.set(key, String(value));
    }
    return `<${baseUrl}${path}?${params.toString()}>`;
  };
  if (hasNext) links.push(`${url(page.page + 1)}; rel="next"`);
  if (page.page > 1) links.push(`${url(page.page - 1)}; rel="previous"`);
  return links.length ? links.join(', ') : null;
}
