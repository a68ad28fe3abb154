/**
 * Reading the account tables' JSON columns. They are written only by this service, but JSON has no element
 * type, so a list is read back keeping its strings alone rather than trusting the cast.
 */

/** The strings of a JSON list column; null when the value is not a list (e.g. a key's "every model"). */
export function stringsOrNull(value: unknown): string[] | null {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : null;
}

/** The strings of a JSON list column; empty when the value is not a list. */
export function stringsOf(value: unknown): string[] {
  return stringsOrNull(value) ?? [];
}
