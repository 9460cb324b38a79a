// Calendars of billing: an installation's billing periods (C10.1, C10.2) and a developer's payout
// sweep instants (C10.5, C14.13). Pure functions of dates; "now" is always passed in.

export type BillingInterval = 'month' | 'year';
export type PayoutSchedule = 'monthly' | 'fortnightly' | 'weekly';
export const PAYOUT_SCHEDULES: PayoutSchedule[] = ['monthly', 'fortnightly', 'weekly'];

const DAY_MS = 86_400_000;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/**
 * `anchor` plus `months` calendar months, same time of day; the day of month is clamped (Jan 31 +
 * 1 month = Feb 28/29). Always counted from the anchor, so periods never drift (Mar 31 after Feb 29).
 */
export function addMonths(anchor: Date, months: number): Date {
  const total = anchor.getUTCFullYear() * 12 + anchor.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
  return new Date(Date.UTC(year, month, day, anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds()));
}

export interface Period {
  start: Date;
  end: Date;
}

/** The billing period [start, end) that contains `now`, periods counted from `anchor`; null before it. */
export function periodContaining(anchor: Date, interval: BillingInterval, now: Date): Period | null {
  if (now.getTime() < anchor.getTime()) return null;
  const step = interval === 'year' ? 12 : 1;
  const monthsApart = (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
  let k = Math.max(0, Math.floor(monthsApart / step));
  while (k > 0 && addMonths(anchor, k * step).getTime() > now.getTime()) k--;
  while (addMonths(anchor, (k + 1) * step).getTime() <= now.getTime()) k++;
  return { start: addMonths(anchor, k * step), end: addMonths(anchor, (k + 1) * step) };
}

function utcMidnight(d: Date): number {
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

/** 00:00 UTC of the first Monday strictly after `t` (fortnightly schedules count from it). */
function firstMondayAfter(t: Date): number {
  const midnight = utcMidnight(t);
  const dow = new Date(midnight).getUTCDay(); // 0 Sunday .. 6 Saturday
  let next = midnight + ((8 - dow) % 7) * DAY_MS;
  if (next <= t.getTime()) next += 7 * DAY_MS;
  return next;
}

/** The latest sweep instant in (createdAt, now], or null when none has come yet (C14.13). */
export function latestInstant(schedule: PayoutSchedule, createdAt: Date, now: Date): Date | null {
  let t: number;
  if (schedule === 'monthly') {
    t = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  } else if (schedule === 'weekly') {
    const midnight = utcMidnight(now);
    t = midnight - ((new Date(midnight).getUTCDay() + 6) % 7) * DAY_MS;
  } else {
    const first = firstMondayAfter(createdAt);
    if (now.getTime() < first) return null;
    t = first + Math.floor((now.getTime() - first) / (14 * DAY_MS)) * 14 * DAY_MS;
  }
  return t > createdAt.getTime() ? new Date(t) : null;
}

/** The first sweep instant after `now` (and after the account was created): `nextPayoutAt`. */
export function nextInstant(schedule: PayoutSchedule, createdAt: Date, now: Date): Date {
  const from = now.getTime() < createdAt.getTime() ? createdAt : now;
  if (schedule === 'monthly') return new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
  if (schedule === 'weekly') return new Date(firstMondayAfter(from));
  const first = firstMondayAfter(createdAt);
  if (from.getTime() < first) return new Date(first);
  return new Date(first + (Math.floor((from.getTime() - first) / (14 * DAY_MS)) + 1) * 14 * DAY_MS);
}
