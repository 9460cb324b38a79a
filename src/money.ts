// Money is integer minor units inside the service and a two-decimal string at the edge (C5.2).

export function formatMinor(minor: number): string;
export function formatMinor(minor: number | null | undefined): string | null;
export function formatMinor(minor: number | null | undefined): string | null {
  if (minor === null || minor === undefined) return null;
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Parse a decimal string or number ("19.9", 19.9, "19.90") into minor units without float sums. */
export function parseMoney(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const text = typeof value === 'number' ? value.toFixed(2) : String(value).trim();
  const m = /^(-)?(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!m) throw new RangeError(`not a money amount: ${String(value)}`);
  const minor = Number(m[2]) * 100 + Number((m[3] ?? '').padEnd(2, '0'));
  return m[1] ? -minor : minor;
}
