/**
 * Redaction of the URL-fetch tool's exchanges before they are stored: whatever could be a credential is
 * replaced, keeping names and shapes (what the service-documents learner needs). Redacting too much is
 * acceptable; leaking is not, so names and values are both checked.
 */

export const REDACTED = '[redacted]';

// A name that says its value is a credential (header, query parameter, JSON field, form field).
const SECRET_NAME = new RegExp(
  [
    'auth',
    'token',
    'secret',
    'passw',
    'pwd',
    'api[-_]?key',
    'access[-_]?key',
    'private[-_]?key',
    'credential',
    'session',
    'cookie',
    'signature',
    'jwt',
    'bearer',
    'otp',
  ].join('|'),
  'i',
);

// Values that are credentials whatever they are called.
const SECRET_VALUES = [
  /\b(?:Bearer|Basic|Digest|Token)\s+[^\s,;]+/gi,
  /\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{8,}/g,
  /\b(?:sbc|sbs|sbd|whsec|ghp|gho|ghs|github_pat|glpat|xox[abpr])[-_][A-Za-z0-9_+/=-]{8,}/g,
  /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
];

const MAX_BODY_CHARS = 64 * 1024;

type HeaderMap = Record<string, string | string[]>;

interface ExchangeMessage {
  headers: HeaderMap;
  /** The raw body text; absent when there was none. */
  body?: string;
}

export interface RawExchange {
  method: string;
  url: string;
  status: number;
  time: string;
  request: ExchangeMessage;
  response: ExchangeMessage;
}

export interface RedactedExchange {
  method: string;
  url: string;
  status: number;
  time: string;
  request: { headers: HeaderMap; body?: unknown };
  response: { headers: HeaderMap; body?: unknown };
}

function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

// `name=value` pairs inside text (a URL or form echoed in a body, a log line): redacted by name.
const NAMED_PAIR = /([?&;\s]|^)([\w.-]+)=([^&\s"'#;]*)/g;

function redactText(text: string): string {
  const byShape = SECRET_VALUES.reduce((out, pattern) => out.replace(pattern, REDACTED), text);
  return byShape.replace(NAMED_PAIR, (pair, before: string, name: string) =>
    isSecretName(name) ? `${before}${name}=${REDACTED}` : pair,
  );
}

function redactValue(name: string, value: string): string {
  return isSecretName(name) ? REDACTED : redactText(value);
}

function redactHeaders(headers: HeaderMap): HeaderMap {
  const out: HeaderMap = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    out[key] = Array.isArray(value) ? value.map((item) => redactValue(key, item)) : redactValue(key, value);
  }
  return out;
}

/** Drops user info (`user:pass@`) and redacts query values by name and by shape. */
export function redactUrl(raw: string): string {
  const url = new URL(raw);
  url.username = '';
  url.password = '';
  const params = [...url.searchParams.entries()];
  url.search = '';
  for (const [name, value] of params) url.searchParams.append(name, redactValue(name, value));
  return url.toString();
}

function redactJson(value: unknown, name = ''): unknown {
  if (typeof value === 'string') return redactValue(name, value);
  if (Array.isArray(value)) return value.map((item) => redactJson(item, name));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        isSecretName(key) && (item === null || typeof item !== 'object') ? REDACTED : redactJson(item, key),
      ]),
    );
  }
  if (typeof value === 'number' && isSecretName(name)) return REDACTED;
  return value;
}

function contentTypeOf(headers: HeaderMap): string {
  const value = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  return (Array.isArray(value) ? value[0] : value)?.split(';')[0]?.trim().toLowerCase() ?? '';
}

/** A JSON body as a redacted value, a form body as redacted `a=1&b=2` text, anything else as redacted text. */
function redactBody(body: string | undefined, headers: HeaderMap): unknown {
  if (body === undefined || body === '' || body.length > MAX_BODY_CHARS) return undefined;
  const type = contentTypeOf(headers);
  if (type === 'application/json' || type.endsWith('+json')) {
    try {
      return redactJson(JSON.parse(body));
    } catch {
      return redactText(body);
    }
  }
  if (type === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(body);
    const out = new URLSearchParams();
    for (const [name, value] of form) out.append(name, redactValue(name, value));
    return out.toString();
  }
  return redactText(body);
}

export function redactExchange(exchange: RawExchange): RedactedExchange {
  const message = (part: ExchangeMessage) => {
    const body = redactBody(part.body, part.headers);
    return { headers: redactHeaders(part.headers), ...(body === undefined ? {} : { body }) };
  };
  return {
    method: exchange.method.toUpperCase(),
    url: redactUrl(exchange.url),
    status: exchange.status,
    time: exchange.time,
    request: message(exchange.request),
    response: message(exchange.response),
  };
}
