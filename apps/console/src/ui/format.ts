const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const usdFormat = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});

export const count = (value: number) => integer.format(value);
export const usd = (value: number) => usdFormat.format(value);
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
