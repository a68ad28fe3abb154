import { isSafeName, isSecretName } from './classify';

/**
 * What a replaying agent needs to know about an operation's headers and query, learned by name only:
 * which credential it takes, whether a retry is safe, how it pages, which headers report its rate limit.
 * No header or query value is kept; the scheme word of `Authorization` is the one thing read from a value,
 * and only when it is a known scheme.
 */

export type SecurityScheme =
  | { type: 'http'; scheme: 'bearer' | 'basic' | 'digest' }
  | { type: 'apiKey'; in: 'header' | 'query' | 'cookie'; name: string };

export interface Pagination {
  style: 'link-header' | 'cursor' | 'page' | 'offset';
  /** Query parameters that drive it (`page`, `per_page`, `starting_after`, `limit`). */
  query: string[];
  /** Body fields that drive it (`has_more`, `next_cursor`); cursor style only. */
  fields?: string[];
  /** The response header carrying the next page; link-header style only. */
  header?: 'link';
}

export interface ReplaySignals {
  /** Security scheme key → scheme, for every credential seen. */
  schemes: Map<string, SecurityScheme>;
  /** Per exchange, the scheme keys it presented (empty = none). */
  authPerExchange: string[][];
  idempotencyHeader?: string;
  rateLimitHeaders: Set<string>;
  linkHeader: boolean;
  cursorQuery: Set<string>;
  cursorFields: Set<string>;
  pageQuery: Set<string>;
  offsetQuery: Set<string>;
  sizeQuery: Set<string>;
}

const HTTP_SCHEMES = new Set(['bearer', 'basic', 'digest']);
const AUTH_HEADER =
  /(api[-_]?key|apikey|access[-_]?token|auth[-_]?token|subscription[-_]?key|(^|-)token$|(^|-)key$|secret|credential)/;
const AUTH_QUERY =
  /^(api[-_]?key|apikey|key|access[-_]?token|token|auth|auth[-_]?token|client[-_]?secret|sig|signature)$/i;
const SESSION_COOKIE = /(sess|sid|auth|token)/i;
const IDEMPOTENCY_HEADERS = new Set(['idempotency-key', 'x-idempotency-key']);
const RATE_LIMIT_HEADER = /(ratelimit|rate-limit|retry-after)/;
const CURSOR_QUERY = new Set([
  'starting_after',
  'ending_before',
  'cursor',
  'after',
  'before',
  'page_token',
  'pagetoken',
  'next_token',
  'continuation_token',
]);
const CURSOR_FIELDS = new Set([
  'has_more',
  'next_page',
  'next_cursor',
  'cursor',
  'next_page_token',
  'nextpagetoken',
  'end_cursor',
  'continuation_token',
  'has_next_page',
]);
const PAGE_QUERY = new Set(['page']);
const OFFSET_QUERY = new Set(['offset', 'skip']);
const SIZE_QUERY = new Set(['limit', 'per_page', 'page_size', 'pagesize']);
// Request headers every client sends or a proxy adds: not part of an operation's contract.
const STANDARD_HEADERS = new Set([
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'authorization',
  'cache-control',
  'connection',
  'content-encoding',
  'content-length',
  'content-type',
  'cookie',
  'dnt',
  'expect',
  'forwarded',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-unmodified-since',
  'keep-alive',
  'origin',
  'pragma',
  'proxy-authorization',
  'referer',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'via',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
]);

export function emptySignals(): ReplaySignals {
  return {
    schemes: new Map(),
    authPerExchange: [],
    rateLimitHeaders: new Set(),
    linkHeader: false,
    cursorQuery: new Set(),
    cursorFields: new Set(),
    pageQuery: new Set(),
    offsetQuery: new Set(),
    sizeQuery: new Set(),
  };
}

/** A response header that reports a rate limit (`x-ratelimit-remaining`, `ratelimit-reset`, `retry-after`). */
export function isRateLimitHeader(name: string): boolean {
  return RATE_LIMIT_HEADER.test(name) && isSafeName(name);
}

/** A query parameter that carries a credential: described as a security scheme, never as a parameter. */
export function isAuthQueryName(name: string): boolean {
  return AUTH_QUERY.test(name);
}

/** A request header worth documenting as a parameter: not standard, not a credential, a printable name. */
export function isDocumentedRequestHeader(name: string): boolean {
  if (IDEMPOTENCY_HEADERS.has(name)) return true;
  return (
    !STANDARD_HEADERS.has(name) &&
    !name.startsWith('sec-') &&
    !AUTH_HEADER.test(name) &&
    !isSecretName(name) &&
    isSafeName(name)
  );
}

function authSchemes(headers: Map<string, string[]>, queryNames: readonly string[]): Array<[string, SecurityScheme]> {
  const found: Array<[string, SecurityScheme]> = [];
  for (const value of headers.get('authorization') ?? []) {
    const word = value.trim().split(/\s+/);
    const scheme = word.length > 1 ? word[0]!.toLowerCase() : '';
    if (HTTP_SCHEMES.has(scheme))
      found.push([scheme, { type: 'http', scheme: scheme as 'bearer' | 'basic' | 'digest' }]);
    else found.push(['apiKey.header.authorization', { type: 'apiKey', in: 'header', name: 'authorization' }]);
  }
  for (const name of headers.keys()) {
    if (name !== 'authorization' && !IDEMPOTENCY_HEADERS.has(name) && AUTH_HEADER.test(name) && isSafeName(name)) {
      found.push([`apiKey.header.${name}`, { type: 'apiKey', in: 'header', name }]);
    }
  }
  for (const name of queryNames) {
    if (isAuthQueryName(name) && isSafeName(name))
      found.push([`apiKey.query.${name}`, { type: 'apiKey', in: 'query', name }]);
  }
  for (const cookie of headers.get('cookie') ?? []) {
    for (const pair of cookie.split(';')) {
      const name = pair.split('=')[0]!.trim();
      if (SESSION_COOKIE.test(name) && isSafeName(name))
        found.push([`apiKey.cookie.${name}`, { type: 'apiKey', in: 'cookie', name }]);
    }
  }
  return found;
}

/** Records one exchange's signals. Header names arrive lowercased. */
export function observeSignals(
  signals: ReplaySignals,
  exchange: {
    requestHeaders: Map<string, string[]>;
    responseHeaders: Map<string, string[]>;
    queryNames: readonly string[];
    responseBody: unknown;
  },
): void {
  const schemes = authSchemes(exchange.requestHeaders, exchange.queryNames);
  for (const [key, scheme] of schemes) signals.schemes.set(key, scheme);
  signals.authPerExchange.push([...new Set(schemes.map(([key]) => key))].sort());
  for (const name of exchange.requestHeaders.keys())
    if (IDEMPOTENCY_HEADERS.has(name)) signals.idempotencyHeader = name;
  for (const name of exchange.responseHeaders.keys()) {
    if (isRateLimitHeader(name)) signals.rateLimitHeaders.add(name);
    if (name === 'link') signals.linkHeader = true;
  }
  for (const name of exchange.queryNames) {
    const lower = name.toLowerCase();
    if (CURSOR_QUERY.has(lower)) signals.cursorQuery.add(name);
    if (PAGE_QUERY.has(lower)) signals.pageQuery.add(name);
    if (OFFSET_QUERY.has(lower)) signals.offsetQuery.add(name);
    if (SIZE_QUERY.has(lower)) signals.sizeQuery.add(name);
  }
  const body = exchange.responseBody;
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    for (const key of Object.keys(body)) if (CURSOR_FIELDS.has(key.toLowerCase())) signals.cursorFields.add(key);
  }
}

const sorted = (...sets: Set<string>[]) => [...new Set(sets.flatMap((set) => [...set]))].sort();

/**
 * The paging style, strongest evidence first: a Link header, then cursor fields or parameters, then page, then offset.
 */
export function paginationOf(signals: ReplaySignals): Pagination | undefined {
  if (signals.linkHeader)
    return {
      style: 'link-header',
      header: 'link',
      query: sorted(signals.pageQuery, signals.sizeQuery, signals.cursorQuery),
    };
  if (signals.cursorQuery.size > 0 || signals.cursorFields.size > 0)
    return {
      style: 'cursor',
      query: sorted(signals.cursorQuery, signals.sizeQuery),
      fields: sorted(signals.cursorFields),
    };
  if (signals.pageQuery.size > 0) return { style: 'page', query: sorted(signals.pageQuery, signals.sizeQuery) };
  if (signals.offsetQuery.size > 0) return { style: 'offset', query: sorted(signals.offsetQuery, signals.sizeQuery) };
  return undefined;
}

/**
 * GET, HEAD, OPTIONS, PUT and DELETE are idempotent by HTTP; POST and PATCH only when a client sent an idempotency key.
 */
export function isIdempotent(method: string, signals: ReplaySignals): boolean {
  return (
    ['get', 'head', 'options', 'put', 'delete', 'trace'].includes(method) || signals.idempotencyHeader !== undefined
  );
}

/** The auth rule names seen for the operation, `none` included when some exchange carried no credential. */
export function authRuleNames(signals: ReplaySignals): string[] {
  const names = new Set<string>();
  for (const keys of signals.authPerExchange) {
    if (keys.length === 0) names.add('none');
    for (const key of keys) names.add(key);
  }
  return [...names].sort();
}
