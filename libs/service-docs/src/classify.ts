/**
 * What a single token looks like: a path segment, a query value, a property name, a string value. Every
 * decision about what may be printed in a document starts here, so the rules lean towards "this is a value".
 */

/** How a path segment reads. `slug` and `version` are the only kinds that may ever be printed as literals. */
export type SegmentKind = 'version' | 'slug' | 'integer' | 'uuid' | 'date' | 'email' | 'id' | 'string';

/** String formats we name in schemas (JSON Schema 2020-12 vocabulary). */
export type StringFormat = 'date-time' | 'date' | 'uuid' | 'uri' | 'email';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
// RFC 3339 with seconds and an offset: what ajv-formats accepts as `date-time`, so a declared format holds.
const DATE_TIME = new RegExp(
  String.raw`^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])` + // the date
    String.raw`T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?` + // the time
    String.raw`(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$`, // the offset
  'i',
);
const EMAIL = /^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/;
const INTEGER = /^(0|[1-9]\d{0,15})$/;
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?$/;
// `v1`, `v2beta`, `v1.1`, `v1beta2`: version segments are kept as literals.
const VERSION = /^v\d+(\.\d+)*([a-z]+\d*)?$/i;
const VERSION_WORDS = new Set(['api', 'rest']);
const WORDLIKE = /^[A-Za-z][A-Za-z0-9._~-]*$/;
const EXTENSION = /\.(json|xml|csv|txt|yaml|html)$/i;

/** A token that names one thing (an id, a key, a hash): never a literal and never printed. */
export function isOpaqueId(token: string): boolean {
  const letters = /[A-Za-z]/.test(token);
  const digits = token.replace(/\D/g, '').length;
  if (letters && digits > 0 && (token.length >= 8 || digits >= 3)) return !VERSION.test(token);
  // Long random letters in mixed case (base62 without a digit) read as tokens too.
  if (token.length >= 12 && !/[-_.]/.test(token) && /[a-z]/.test(token) && (token.match(/[A-Z]/g)?.length ?? 0) >= 3)
    return true;
  return token.length >= 40;
}

/** Splits a known file extension off a segment (`SM12.json` → `SM12` + `.json`), so ids keep their suffix. */
export function splitExtension(segment: string): { base: string; ext: string } {
  const match = EXTENSION.exec(segment);
  if (!match || match.index === 0) return { base: segment, ext: '' };
  return { base: segment.slice(0, match.index), ext: match[0].toLowerCase() };
}

/**
 * The kind of one decoded path segment (without its extension). `depth` is its position: a date in the
 * first segment is an API version (`/2010-04-01/...`), anywhere else a value.
 */
export function classifySegment(segment: string, depth: number): SegmentKind {
  if (VERSION.test(segment) || VERSION_WORDS.has(segment.toLowerCase())) return 'version';
  if (DATE.test(segment)) return depth === 0 ? 'version' : 'date';
  if (INTEGER.test(segment)) return 'integer';
  if (UUID.test(segment)) return 'uuid';
  if (EMAIL.test(segment)) return 'email';
  if (/^[A-Za-z0-9._~-]+$/.test(segment) && isOpaqueId(segment)) return 'id';
  return WORDLIKE.test(segment) ? 'slug' : 'string';
}

/** Kinds that always make a path parameter. */
export function isValueKind(kind: SegmentKind): boolean {
  return kind !== 'slug' && kind !== 'version';
}

/**
 * A name (property, query parameter, header, cookie) safe to print: word-like, short, and not itself a
 * value (maps keyed by ids or emails must not print their keys).
 */
export function isSafeName(name: string): boolean {
  if (!/^[A-Za-z_$][A-Za-z0-9_.$[\]-]{0,63}$/.test(name)) return false;
  const kind = classifySegment(name.replace(/[[\]]/g, ''), 1);
  return kind === 'slug' || kind === 'version';
}

// Names whose values are credentials: nothing under them is ever enumerated.
const SECRET_NAME =
  /(token|secret|passw|pwd|auth|session|cookie|credential|signature|api[-_]?key|private|otp|^pin$|nonce)/i;
// Names whose values identify or describe one person or thing: enumerating them would list values.
const IDENTIFYING_WORDS = [
  'id',
  'ids',
  'key',
  'uuid',
  'guid',
  'email',
  'mail',
  'phone',
  'login',
  'user',
  'username',
  'name',
  'owner',
  'handle',
  'slug',
  'address',
  'ip',
  'iban',
  'card',
  'ssn',
  'code',
  'hash',
  'url',
  'uri',
  'path',
  'host',
  'title',
  'body',
  'description',
  'message',
  'text',
  'content',
  'comment',
  'note',
  'query',
  'search',
  'metadata',
  'label',
  'tag',
];
const IDENTIFYING_NAME = new RegExp(`(^|_|-)(${IDENTIFYING_WORDS.join('|')})s?($|_|-)|email|name$`, 'i');

// Containers of caller-chosen data (and `*`, the values of a map): whatever sits under them is user data.
const USER_DATA_NAME = /^(\*|metadata|meta|custom_fields|attributes|tags|labels|topics|extra)$/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Whether a field at this path may carry an enum: no secret ancestor, and a leaf that names a category. */
export function mayEnumerate(path: readonly string[]): boolean {
  const leaf = path.at(-1);
  if (leaf === undefined || path.some((name) => isSecretName(name) || USER_DATA_NAME.test(name))) return false;
  return !IDENTIFYING_NAME.test(leaf) && !/(Id|Ids|Key|Name|Url|Email)$/.test(leaf);
}

/** A value short and word-like enough to be a category (`open`, `requires_payment`, `chat.completion`). */
export function isEnumWord(value: string): boolean {
  return value.length <= 32 && /^[a-z]+([_.-][a-z]+)*$/.test(value);
}

export function stringFormat(value: string): StringFormat | undefined {
  if (DATE_TIME.test(value)) return 'date-time';
  if (DATE.test(value)) return 'date';
  if (UUID.test(value)) return 'uuid';
  if (EMAIL.test(value)) return 'email';
  if (/^https?:\/\/[^\s]+$/i.test(value) && URL.canParse(value)) return 'uri';
  return undefined;
}

/** What a string on the wire (a query value, a form field) most likely carries. */
export type ScalarGuess =
  | { type: 'integer'; value: number }
  | { type: 'number'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'string'; value: string };

export function guessScalar(raw: string): ScalarGuess {
  if (INTEGER.test(raw) || /^-[1-9]\d{0,15}$/.test(raw)) return { type: 'integer', value: Number(raw) };
  if (NUMBER.test(raw)) return { type: 'number', value: Number(raw) };
  if (raw === 'true' || raw === 'false') return { type: 'boolean', value: raw === 'true' };
  return { type: 'string', value: raw };
}

/** `issues` → `issue`, `repositories` → `repository`, `statuses` → `status`; for naming parameters. */
export function singular(word: string): string {
  if (/ies$/.test(word) && word.length > 4) return word.slice(0, -3) + 'y';
  if (/(s|x|z|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (/(ss|us|is)$/.test(word)) return word;
  if (/s$/.test(word)) return word.slice(0, -1);
  return word;
}

/** A collection name: plural-looking (`repos`, `customers`), so the next segment is likely one of its members. */
export function isCollectionName(word: string): boolean {
  return /[a-z]{2}s$/i.test(word) && !/(ss|us|is)$/i.test(word);
}

/** A parameter name built from property names: lower snake case, starting with a letter. */
export function toParamName(raw: string): string {
  const name = raw
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return /^[a-z]/.test(name) ? name : `p_${name || 'value'}`;
}
