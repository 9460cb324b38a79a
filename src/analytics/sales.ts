// Store sales analytics (app-api.md Store analytics; C6.7, C6.8, C14.14), computed in SQL over the
// range in one named statement: the range's orders are read once (by the (store_id, created_at)
// index), every day of the range comes from generate_series, sessions and page views from the
// storefront events of C7.4. Days are UTC days.
import { Type } from 'typebox';
import type { Queryable } from '../db/db.js';
import { badRequest } from '../http/errors.js';
import { parseInstant } from '../content/fields.js';
import { mulDivRound } from '../orders/pricing.js';
import { hundredthsStep } from '../currencies.js';

export const RANGES = ['today', 'yesterday', 'last_7_days', 'last_30_days', 'last_90_days', 'this_month', 'last_month', 'this_year', 'custom'] as const;
export type RangeName = (typeof RANGES)[number];
/** Longest custom range (about ten years): generate_series stays small. */
export const MAX_DAYS = 3660;

const DAY = 86_400_000;

export interface DayRange {
  /** 00:00 UTC of the first day. */
  start: Date;
  /** 00:00 UTC of the day after the last one. */
  end: Date;
  days: number;
}

const utcDay = (ms: number) => ms - (((ms % DAY) + DAY) % DAY);
const dateText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** C6.7: the range named by the query on the service clock; a bad range -> 400 envelope. */
export function resolveRange(query: { range?: string; start_date?: string; end_date?: string }, now: Date): DayRange {
  const raw = typeof query.range === 'string' && query.range.trim() !== '' ? query.range.trim() : 'last_7_days';
  if (!(RANGES as readonly string[]).includes(raw)) throw badRequest(`range must be one of ${RANGES.join(', ')}`);
  const range = raw as RangeName;
  const today = utcDay(now.getTime());
  const tomorrow = today + DAY;
  const d = new Date(today);
  const span = (start: number, end: number): DayRange => ({ start: new Date(start), end: new Date(end), days: Math.round((end - start) / DAY) });
  switch (range) {
    case 'today':
      return span(today, tomorrow);
    case 'yesterday':
      return span(today - DAY, today);
    case 'last_7_days':
      return span(today - 6 * DAY, tomorrow);
    case 'last_30_days':
      return span(today - 29 * DAY, tomorrow);
    case 'last_90_days':
      return span(today - 89 * DAY, tomorrow);
    case 'this_month':
      return span(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), tomorrow);
    case 'last_month':
      return span(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1), Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
    case 'this_year':
      return span(Date.UTC(d.getUTCFullYear(), 0, 1), tomorrow);
    case 'custom': {
      // C14.14: start_date and end_date name whole UTC days, both included.
      const from = parseInstant(query.start_date);
      const to = parseInstant(query.end_date);
      if (!from || !to) throw badRequest('A custom range needs start_date and end_date as ISO 8601 dates');
      const start = utcDay(from.getTime());
      const end = utcDay(to.getTime()) + DAY;
      if (end <= start) throw badRequest('end_date must not be before start_date');
      if ((end - start) / DAY > MAX_DAYS) throw badRequest(`A custom range spans at most ${MAX_DAYS} days`);
      return span(start, end);
    }
  }
}

/**
 * The range's instants, made in SQL from its first and last UTC days (`YYYY-MM-DD`), not passed as
 * Dates: the instant after a range ending on 9999-12-31 is in year 10000, which a JavaScript Date
 * writes as `+010000-01-01T...`, text the embedded database refused (a 500 for a valid custom range).
 */
const FROM = `($2::date::timestamp AT TIME ZONE 'UTC')`;
const UNTIL = `(($3::date + 1)::timestamp AT TIME ZONE 'UTC')`;

// Sums of minor units come back as the exact text of SQL's numeric sums (see `major`).
interface SalesRow {
  /** The store's currency: the averages are whole amounts of it. */
  currency: string;
  orders: number;
  gross_minor: string;
  tax_minor: string;
  cancelled_count: number;
  cancelled_minor: string;
  customers: number;
  returning: number;
  sessions: number;
  orders_by_day: [string, number][];
  views_by_day: [string, number][];
  regions: [string, string][] | null;
  sources: [string, number][] | null;
}

/**
 * Orders created in [start, end) of the store (read from the covering index orders_store_sales_idx);
 * cancelled ones (status `canceled` or `cancelled_at` set) only in the cancelled figures. Customers
 * are the orders' customer records; a returning one has an order (not cancelled) before the range.
 * Sessions are the distinct session ids of `session` events, each counted under the source of its
 * first one (`direct` when none), so the sources add up to the sessions; page views count
 * `page_view` events. Regions: shipping province, else country, else `Unknown`, top 10 by sales.
 */
const SALES_SQL = `
WITH o AS MATERIALIZED (
  SELECT total_minor, tax_minor, customer_id,
         (status = 'canceled' OR cancelled_at IS NOT NULL) AS cancelled,
         (created_at AT TIME ZONE 'UTC')::date AS day,
         sales_region AS region
    FROM orders
   WHERE store_id = $1::uuid AND created_at >= ${FROM} AND created_at < ${UNTIL}
),
by_day AS MATERIALIZED (
  SELECT day, count(*) FILTER (WHERE NOT cancelled) AS orders,
         COALESCE(sum(total_minor) FILTER (WHERE NOT cancelled), 0) AS gross,
         COALESCE(sum(tax_minor) FILTER (WHERE NOT cancelled), 0) AS tax,
         count(*) FILTER (WHERE cancelled) AS cancelled, COALESCE(sum(total_minor) FILTER (WHERE cancelled), 0) AS cancelled_gross
    FROM o GROUP BY day
),
buyers AS MATERIALIZED (SELECT DISTINCT customer_id FROM o WHERE NOT cancelled AND customer_id IS NOT NULL),
days AS (SELECT d::date AS day FROM generate_series($2::date, $3::date, interval '1 day') d),
ev AS MATERIALIZED (
  SELECT type, session_id, source, occurred_at, (occurred_at AT TIME ZONE 'UTC')::date AS day
    FROM storefront_events
   WHERE store_id = $1::uuid AND occurred_at >= ${FROM} AND occurred_at < ${UNTIL}
),
sessions AS MATERIALIZED (
  SELECT DISTINCT ON (session_id) session_id, COALESCE(NULLIF(btrim(source), ''), 'direct') AS source
    FROM ev WHERE type = 'session' ORDER BY session_id, occurred_at
)
SELECT
  (SELECT currency FROM stores WHERE id = $1::uuid) AS currency,
  (SELECT COALESCE(sum(orders), 0) FROM by_day)::int AS orders,
  (SELECT COALESCE(sum(gross), 0) FROM by_day)::text AS gross_minor,
  (SELECT COALESCE(sum(tax), 0) FROM by_day)::text AS tax_minor,
  (SELECT COALESCE(sum(cancelled), 0) FROM by_day)::int AS cancelled_count,
  (SELECT COALESCE(sum(cancelled_gross), 0) FROM by_day)::text AS cancelled_minor,
  (SELECT count(*) FROM buyers)::int AS customers,
  (SELECT count(*) FROM buyers b WHERE EXISTS (
     SELECT 1 FROM orders p
      WHERE p.customer_id = b.customer_id AND p.created_at < ${FROM} AND p.status <> 'canceled' AND p.cancelled_at IS NULL))::int AS returning,
  (SELECT count(*) FROM sessions)::int AS sessions,
  (SELECT json_agg(json_build_array(to_char(days.day, 'YYYY-MM-DD'), COALESCE(n.orders, 0)) ORDER BY days.day)
     FROM days LEFT JOIN by_day n ON n.day = days.day) AS orders_by_day,
  (SELECT json_agg(json_build_array(to_char(days.day, 'YYYY-MM-DD'), COALESCE(n.count, 0)) ORDER BY days.day)
     FROM days LEFT JOIN (SELECT day, count(*) AS count FROM ev WHERE type = 'page_view' GROUP BY day) n ON n.day = days.day) AS views_by_day,
  (SELECT json_agg(json_build_array(region, minor::text) ORDER BY minor DESC, region) FROM (
     SELECT region, sum(total_minor) AS minor FROM o WHERE NOT cancelled
      GROUP BY region ORDER BY minor DESC, region LIMIT 10) t) AS regions,
  (SELECT json_agg(json_build_array(source, n) ORDER BY n DESC, source) FROM (
     SELECT source, count(*)::int AS n FROM sessions GROUP BY source) s) AS sources`;

/**
 * Exact minor units as a number of major units with 2 decimals, rounded once (C5.2, C6.8). An
 * order's total is bounded at 2^53 - 1 (MAX_ORDER_MINOR) but a sum over orders is not: read as a
 * bigint it lost cents past 2^53 and overflowed int8 (a 500) past 2^63, so sums stay numeric text
 * and are divided here in BigInt; Number() of the decimal text is the nearest number to it.
 */
function major(minor: bigint): number {
  const abs = minor < 0n ? -minor : minor;
  return Number(`${minor < 0n ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`);
}
/**
 * a / b hundredths rounded half up to a whole `step` (the store currency's smallest amount in
 * hundredths, currencies.ts hundredthsStep), as major units; a >= 0, b > 0. An average is an amount
 * of the store's currency: in hundredths alone a yen store's orders of 100, 100 and 101 yen had an
 * average order of 100.33 yen, an amount no yen figure can be (as a line's final_price, pricing.ts).
 */
const majorPer = (a: bigint, b: number, step: number) => {
  const d = BigInt(b) * BigInt(step);
  return major(((2n * a + d) / (2n * d)) * BigInt(step));
};
/** a / b rounded half up to 2 decimals; 0 when b is 0 (C6.8). */
const ratio2 = (a: number, b: number) => (b === 0 ? 0 : mulDivRound(a, 100, b) / 100);

export async function salesAnalytics(q: Queryable, storeId: string, range: DayRange) {
  const lastDay = range.end.getTime() - DAY;
  const { rows } = await q.query<SalesRow>(
    SALES_SQL,
    [storeId, dateText(range.start.getTime()), dateText(lastDay)],
    { name: 'analytics_sales' },
  );
  const r = rows[0];
  const ordersByDay: Record<string, number> = {};
  for (const [day, n] of r.orders_by_day ?? []) ordersByDay[day] = Number(n);
  const viewsByDate: Record<string, { count: number }> = {};
  for (const [day, n] of r.views_by_day ?? []) viewsByDate[day] = { count: Number(n) };
  // Regions and sources are text from buyers and storefront visitors: built with fromEntries, which
  // defines own keys, so a source named `__proto__` is counted rather than setting the prototype.
  const saleByTopRegion: Record<string, number> = Object.fromEntries((r.regions ?? []).map(([region, minor]) => [region, major(BigInt(minor))]));
  const sourceCount: Record<string, { count: number }> = Object.fromEntries((r.sources ?? []).map(([source, n]) => [source, { count: Number(n) }]));
  const gross = BigInt(r.gross_minor);
  const step = hundredthsStep(r.currency ?? 'USD');
  return {
    grossSale: major(gross),
    averageOrderValue: r.orders ? majorPer(gross, r.orders, step) : 0,
    avgSalePerDay: majorPer(gross, range.days, step),
    avgOrders: ratio2(r.orders, range.days),
    conversionRate: ratio2(r.orders * 100, r.sessions),
    cancelOrdersCount: r.cancelled_count,
    canceledOrdersAmount: major(BigInt(r.cancelled_minor)),
    totalCustomers: r.customers,
    returningCustomers: r.returning,
    returningCustomerRate: ratio2(r.returning * 100, r.customers),
    taxCollected: major(BigInt(r.tax_minor)),
    viewDataByDays: r.sessions,
    ordersData: { totalOrders: r.orders, ordersByDay },
    saleByTopRegion,
    viewsByDate,
    sourceCount,
  };
}

const count = (description: string) => Type.Object({ count: Type.Integer() }, { description });

/** app-api.md Store analytics, as `salesAnalytics` writes it: amounts as numbers in major units. */
export const SalesSchema = Type.Object({
  grossSale: Type.Number({ description: 'sales of the orders not cancelled' }),
  averageOrderValue: Type.Number(),
  avgSalePerDay: Type.Number(),
  avgOrders: Type.Number({ description: 'orders per day, 2 decimals' }),
  conversionRate: Type.Number({ description: 'orders per 100 sessions, 2 decimals; 0 without sessions' }),
  cancelOrdersCount: Type.Integer(),
  canceledOrdersAmount: Type.Number(),
  totalCustomers: Type.Integer(),
  returningCustomers: Type.Integer({ description: 'customers with an earlier order not cancelled' }),
  returningCustomerRate: Type.Number({ description: 'percent, 2 decimals' }),
  taxCollected: Type.Number(),
  viewDataByDays: Type.Integer({ description: 'the sessions of the range' }),
  ordersData: Type.Object({
    totalOrders: Type.Integer(),
    ordersByDay: Type.Record(Type.String(), Type.Integer(), { description: '`{ "YYYY-MM-DD": orders }`, every day of the range' }),
  }),
  saleByTopRegion: Type.Record(Type.String(), Type.Number(), { description: 'the top 10 regions (shipping province, else country, else `Unknown`) by sales' }),
  viewsByDate: Type.Record(Type.String(), count('page views'), { description: '`{ "YYYY-MM-DD": { count } }`, every day of the range' }),
  sourceCount: Type.Record(Type.String(), count('sessions'), { description: 'sessions by the source of their first event (`direct` without one)' }),
});
