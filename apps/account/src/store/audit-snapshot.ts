/**
 * A resource as an audit record keeps it: JSON with snake_case names, instants as ISO strings, and nothing secret.
 * Bytes (hashes, ciphertexts) are left out; a field whose name says it holds a secret keeps only whether it was set.
 * Records are made from stored rows, so a resource's new fields (a team's budget, a key's limits) are recorded
 * without touching this.
 */
const SECRET_NAME = /(secret|password|token|hash|ciphertext|api_?key|authorization)$/i;
/** Header values are secrets whatever their names; their names are not. */
const SECRET_VALUES = /^headers$/i;
export const MASKED = '[masked]';

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

export function auditSnapshot(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return undefined;
  if (Array.isArray(value)) return value.map(auditSnapshot);
  if (typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (field instanceof Uint8Array || field === undefined) continue;
    // A flag such as `hasApiKey` says whether a secret is set, which is no secret.
    if (SECRET_NAME.test(name) && typeof field !== 'boolean') out[snakeCase(name)] = field === null ? null : MASKED;
    else if (SECRET_VALUES.test(name) && field !== null && typeof field === 'object')
      out[snakeCase(name)] = Object.fromEntries(Object.keys(field).map((header) => [header, MASKED]));
    else out[snakeCase(name)] = auditSnapshot(field);
  }
  return out;
}
