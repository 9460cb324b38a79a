// What every page is rendered with: the signed-in user, the CSRF token of the session, the
// navigation for the user's role, and small formatters (dates as <time> the browser localises,
// money with its currency, paging links). Templates escape by default (`<%= %>`).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { DEVELOPER_ROLES, STORE_ROLES } from '../http/user-auth.js';
import { sessionCsrf } from './session.js';

export interface Paged {
  page: number;
  limit: number;
  total: number;
}

/** The first language the viewer accepts that Intl knows, for numbers and money; `en` otherwise. */
export function viewerLocale(request: FastifyRequest): string {
  const header = request.headers['accept-language'];
  for (const part of String(header ?? '').split(',')) {
    const tag = part.split(';')[0].trim();
    if (!tag || tag === '*') continue;
    try {
      if (Intl.NumberFormat.supportedLocalesOf([tag]).length) return tag;
    } catch {
      // not a well-formed language tag
    }
  }
  return 'en';
}

/**
 * `carry`: query parameters every paging link keeps: the `limit` the page was opened with, so the
 * next page is the next `limit` rows and not the next page at the default size.
 */
export function helpers(locale: string, carry: { limit?: string } = {}) {
  return {
    /** A <time> the browser rewrites in the viewer's locale and zone (assets/dashboard.js); UTC text without script. */
    time(iso: string | null | undefined): string {
      if (!iso) return '<span class="muted">—</span>';
      const d = new Date(iso);
      const text = `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
      return `<time datetime="${d.toISOString()}">${text}</time>`;
    },
    /**
     * An amount as the services write it (a decimal string), formatted from that text: Intl reads a
     * numeric string exactly, where `Number()` rounded sums past 2^53 cents (the ledger's figures
     * are exact there, docs/decisions.md) a cent or more off. Never rounded to the currency's
     * display digits either: the service keeps hundredths (C5.2), a yen charge's developer share
     * is 799.20 (docs/decisions.md "Commission in zero-decimal currencies"), and Intl's digits are
     * CLDR's, not ISO 4217's (AFN, IQD, ... show none): those figures were shown rounded, ¥799 for
     * the 799.20 the API shows. An amount with a fraction the currency's digits cannot show is shown with
     * all the decimals it was written with (¥799.20; ¥1,000 stays ¥1,000).
     */
    money(amount: string, currency: string): string {
      try {
        const exact = typeof amount === 'string' && /^-?[0-9]+(\.[0-9]+)?$/.test(amount);
        const options: Intl.NumberFormatOptions = { style: 'currency', currency };
        const shown = new Intl.NumberFormat(locale, options).resolvedOptions().maximumFractionDigits ?? 2;
        const decimals = exact ? (amount.split('.')[1] ?? '') : '';
        const needed = /[1-9]/.test(decimals) ? decimals.length : 0;
        if (needed > shown) Object.assign(options, { minimumFractionDigits: needed, maximumFractionDigits: needed });
        const format = new Intl.NumberFormat(locale, options).format as (value: number | string) => string;
        return format(exact ? amount : Number(amount));
      } catch {
        return `${amount} ${currency}`;
      }
    },
    number(n: number): string {
      return new Intl.NumberFormat(locale).format(n);
    },
    /** Query string of `params` and the carried ones (empty values dropped) with `page` set. */
    query(params: Record<string, unknown>, page?: number): string {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries({ ...params, ...carry, ...(page ? { page } : {}) })) if (v !== undefined && v !== null && String(v) !== '') q.set(k, String(v));
      const s = q.toString();
      return s ? `?${s}` : '';
    },
    /**
     * The pager's links. Past the end (an old link, a list that shrank) "previous" leads to the last
     * page that has rows, not to the page before this one, which may be empty too; with no rows at
     * all there is nothing to go back to.
     */
    pages(p: Paged) {
      const last = Math.max(1, Math.ceil(p.total / p.limit));
      const prev = p.page > last ? (p.total > 0 ? last : null) : p.page > 1 ? p.page - 1 : null;
      return { page: p.page, last, prev, next: p.page < last ? p.page + 1 : null, total: p.total };
    },
    json(value: unknown): string {
      return value === undefined ? '' : JSON.stringify(value, null, 2);
    },
    /** A body the service stored as text: pretty JSON when it is JSON, else as sent. */
    body(text: string | null): string {
      if (text === null) return '';
      try {
        return JSON.stringify(JSON.parse(text), null, 2);
      } catch {
        return text;
      }
    },
  };
}

export type Helpers = ReturnType<typeof helpers>;

/**
 * The request's `limit`, when it gave one, for the paging links (see `helpers`). Read from the URL
 * as sent: each page validates its own query (its route schema), and this only carries it on.
 */
function carriedQuery(request: FastifyRequest): { limit?: string } {
  const limit = new URLSearchParams(request.url.split('?')[1] ?? '').get('limit');
  return limit ? { limit } : {};
}

/** Renders `template` inside the layout, with what every page needs. */
export function page(deps: Deps, request: FastifyRequest, reply: FastifyReply, template: string, data: Record<string, unknown>, status = 200) {
  const user = request.dashboardUser ?? null;
  const developer = !!user && DEVELOPER_ROLES.includes(user.role);
  const merchant = !!user && STORE_ROLES.includes(user.role);
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .view(template, {
      user,
      developer,
      merchant,
      csrf: user ? sessionCsrf(deps, user.token) : null,
      path: request.url.split('?')[0],
      h: helpers(viewerLocale(request), carriedQuery(request)),
      ...data,
    });
}
