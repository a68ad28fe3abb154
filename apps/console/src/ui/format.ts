const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const usdFormat = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});

export const count = (value: number) => integer.format(value);
/** Dollars to the cent or finer; an amount under a cent keeps two significant digits rather than read $0.00. */
export function usd(value: number): string {
  if (value === 0 || Math.abs(value) >= 0.01) return usdFormat.format(value);
  return new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 2 }).format(
    value,
  );
}

/**
 * Labels for a chart's dollar axis: as many decimals as the step between gridlines needs (at least cents), so
 * gridlines a fraction of a cent apart read apart instead of all "$0.00".
 */
export function usdTicks(ticks: number[]): string[] {
  const step = ticks.length > 1 ? Math.abs(ticks[1]! - ticks[0]!) : Math.abs(ticks[0] ?? 0);
  const digits = step > 0 ? Math.min(10, Math.max(2, Math.ceil(-Math.log10(step) - 1e-9))) : 2;
  const format = new Intl.NumberFormat('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
  return ticks.map((tick) => format.format(tick));
}
export const ms = (value: number | undefined) => (value === undefined ? '—' : `${integer.format(value)} ms`);

export function dateTime(value: string | undefined | null): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime())
    ? value
    : date.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

/** `YYYY-MM-DD` of `date` in the browser's own zone, `days` days before it. */
export function localDay(date: Date, days = 0): string {
  const shifted = new Date(date.getFullYear(), date.getMonth(), date.getDate() - days);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${shifted.getFullYear()}-${pad(shifted.getMonth() + 1)}-${pad(shifted.getDate())}`;
}

export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}
