import type { ChatRequest } from './ir';
import { isObject, type JsonObject } from './json';
import { DialectRequestError, type DialectErrorWording, type DialectIssue } from './request-error';

/**
 * Hand-written structural checks for the request parsers. They read the caller's body in place (no copy of
 * the large base64 strings a schema library's output object would hold) and collect every problem with a
 * dotted path, so one 400 lists them all.
 */

export interface ParseContext {
  issues: DialectIssue[];
  /** Dotted names of fields the neutral form cannot carry, each once (see `DROPPED_FIELDS`). */
  dropped: string[];
}

export const createParseContext = (): ParseContext => ({ issues: [], dropped: [] });

export function addIssue(ctx: ParseContext, path: string, code: DialectIssue['code'], message: string): void {
  ctx.issues.push({ path, code, message });
}

/** `at('messages.0', 'role')` → `messages.0.role`; the root path is `''`. */
export const at = (path: string, key: string | number): string => (path === '' ? String(key) : `${path}.${key}`);

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** OpenAI accepts `null` for every optional field; treating it as absent keeps replayed SDK objects valid. */
const absent = (value: unknown): value is null | undefined => value === undefined || value === null;

function missing(ctx: ParseContext, path: string, required: boolean | undefined): undefined {
  if (required) addIssue(ctx, path, 'required', 'is required');
  return undefined;
}

function wrongType(ctx: ParseContext, path: string, expected: string, value: unknown): undefined {
  addIssue(ctx, path, 'invalid_type', `expected ${expected}, received ${typeName(value)}`);
  return undefined;
}

export interface StringRule {
  required?: boolean;
  nonEmpty?: boolean;
}

export function readString(
  ctx: ParseContext,
  obj: JsonObject,
  key: string,
  path: string,
  rule: StringRule = {},
): string | undefined {
  const value = obj[key];
  const where = at(path, key);
  if (absent(value)) return missing(ctx, where, rule.required);
  if (typeof value !== 'string') return wrongType(ctx, where, 'a string', value);
  if (rule.nonEmpty && value === '') {
    addIssue(ctx, where, 'too_small', 'must not be empty');
    return undefined;
  }
  return value;
}

export interface NumberRule {
  required?: boolean;
  integer?: boolean;
  min?: number;
  max?: number;
}

export function readNumber(
  ctx: ParseContext,
  obj: JsonObject,
  key: string,
  path: string,
  rule: NumberRule = {},
): number | undefined {
  const value = obj[key];
  const where = at(path, key);
  if (absent(value)) return missing(ctx, where, rule.required);
  if (typeof value !== 'number' || !Number.isFinite(value))
    return wrongType(ctx, where, rule.integer ? 'an integer' : 'a number', value);
  if (rule.integer && !Number.isInteger(value)) return wrongType(ctx, where, 'an integer', value);
  if ((rule.min !== undefined && value < rule.min) || (rule.max !== undefined && value > rule.max)) {
    const range =
      rule.max === undefined
        ? `at least ${rule.min}`
        : rule.min === undefined
          ? `at most ${rule.max}`
          : `between ${rule.min} and ${rule.max}`;
    addIssue(ctx, where, 'invalid_value', `must be ${range}`);
    return undefined;
  }
  return value;
}

export function readBoolean(ctx: ParseContext, obj: JsonObject, key: string, path: string): boolean | undefined {
  const value = obj[key];
  if (absent(value)) return undefined;
  if (typeof value !== 'boolean') return wrongType(ctx, at(path, key), 'a boolean', value);
  return value;
}

export function readEnum<T extends string>(
  ctx: ParseContext,
  obj: JsonObject,
  key: string,
  path: string,
  allowed: readonly T[],
  required = false,
): T | undefined {
  const value = obj[key];
  const where = at(path, key);
  if (absent(value)) return missing(ctx, where, required);
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    addIssue(ctx, where, 'invalid_value', `must be one of ${allowed.join(', ')}`);
    return undefined;
  }
  return value as T;
}

export function readObject(
  ctx: ParseContext,
  obj: JsonObject,
  key: string,
  path: string,
  required = false,
): JsonObject | undefined {
  const value = obj[key];
  const where = at(path, key);
  if (absent(value)) return missing(ctx, where, required);
  if (!isObject(value)) return wrongType(ctx, where, 'an object', value);
  return value;
}

export function readArray(
  ctx: ParseContext,
  obj: JsonObject,
  key: string,
  path: string,
  rule: { required?: boolean; nonEmpty?: boolean } = {},
): unknown[] | undefined {
  const value = obj[key];
  const where = at(path, key);
  if (absent(value)) return missing(ctx, where, rule.required);
  if (!Array.isArray(value)) return wrongType(ctx, where, 'an array', value);
  if (rule.nonEmpty && value.length === 0) {
    addIssue(ctx, where, 'too_small', 'must contain at least one item');
    return undefined;
  }
  return value;
}

/** Each item must be an object; the callback gets it with its path. Non-objects become issues. */
export function eachObject(
  ctx: ParseContext,
  items: unknown[],
  path: string,
  visit: (item: JsonObject, itemPath: string) => void,
): void {
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const itemPath = at(path, i);
    if (isObject(item)) visit(item, itemPath);
    else wrongType(ctx, itemPath, 'an object', item);
  }
}

/** OpenAI `metadata`: a flat map of strings. */
export function readStringMap(
  ctx: ParseContext,
  obj: JsonObject,
  key: string,
  path: string,
): Record<string, string> | undefined {
  const map = readObject(ctx, obj, key, path);
  if (!map) return undefined;
  const where = at(path, key);
  for (const [name, value] of Object.entries(map)) {
    if (typeof value !== 'string') wrongType(ctx, at(where, name), 'a string', value);
  }
  return map as Record<string, string>;
}

/** `stop` / `stop_sequences`: one string or a list of them. */
export function readStops(
  ctx: ParseContext,
  obj: JsonObject,
  key: string,
  path: string,
  allowSingle: boolean,
): string[] | undefined {
  const value = obj[key];
  const where = at(path, key);
  if (absent(value)) return undefined;
  if (allowSingle && typeof value === 'string') return value === '' ? undefined : [value];
  if (!Array.isArray(value))
    return wrongType(ctx, where, allowSingle ? 'a string or an array of strings' : 'an array of strings', value);
  const stops: string[] = [];
  value.forEach((stop, i) => {
    if (typeof stop === 'string') stops.push(stop);
    else wrongType(ctx, at(where, i), 'a string', stop);
  });
  return stops.length > 0 ? stops : undefined;
}

/** The last step of every parser: throw with every issue, or hand back the request with its dropped list. */
export function finishRequest(
  ctx: ParseContext,
  request: Omit<ChatRequest, 'dropped'>,
  wording?: DialectErrorWording,
): ChatRequest {
  if (ctx.issues.length > 0) throw new DialectRequestError(ctx.issues, wording);
  // Added to the parser's own object, not to a spread copy: on Node 20 a spread copy that gains a key gets a hidden
  // class of its own on every call.
  return Object.assign(request, { dropped: ctx.dropped });
}

/** A body that is not a JSON object has nothing to collect further. */
export function requireBodyObject(body: unknown): JsonObject {
  if (isObject(body)) return body;
  throw new DialectRequestError([
    {
      path: 'body',
      code: 'invalid_type',
      message: `the request body must be a JSON object, received ${typeName(body)}`,
    },
  ]);
}
