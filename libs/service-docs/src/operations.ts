import { parseBody } from './bodies';
import { guessScalar, isSafeName, stringFormat } from './classify';
import { headerValues, type Exchange } from './observation';
import {
  emptySignals,
  isAuthQueryName,
  isRateLimitHeader,
  isDocumentedRequestHeader,
  observeSignals,
  type ReplaySignals,
} from './replay';
import { emptyShape, observe, type Shape } from './schema';
import { inferTemplates, type PathTemplate } from './templates';

const OPENAPI_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type OpenApiMethod = (typeof OPENAPI_METHODS)[number];

/** A body per media type: a shape when it has a structure, null for text or binary. */
export type BodyShapes = Map<string, Shape | null>;

/** What a query parameter's values looked like: their JSON types and formats, never the values. */
export interface QueryStats {
  count: number;
  repeated: boolean;
  types: Set<'integer' | 'number' | 'boolean' | 'string'>;
  formats: Set<string>;
}

interface ResponseStats {
  count: number;
  content: BodyShapes;
  headers: Set<string>;
}

/** Everything learned about one method on one path template. */
export interface OperationStats {
  method: OpenApiMethod;
  template: string;
  count: number;
  firstSeen: string;
  lastSeen: string;
  sources: Set<string>;
  query: Map<string, QueryStats>;
  headers: Map<string, number>;
  requestBodies: BodyShapes;
  requestBodyCount: number;
  responses: Map<number, ResponseStats>;
  signals: ReplaySignals;
}

function observeBody(shapes: BodyShapes, body: unknown, contentType: string | undefined): boolean {
  const parsed = parseBody(body, contentType);
  if (!parsed) return false;
  if (parsed.kind === 'json' || parsed.kind === 'form') {
    let shape = shapes.get(parsed.mediaType);
    if (!shape) shapes.set(parsed.mediaType, (shape = emptyShape()));
    observe(shape, parsed.value);
  } else if (!shapes.has(parsed.mediaType)) shapes.set(parsed.mediaType, null);
  return true;
}

function observeQuery(stats: Map<string, QueryStats>, params: URLSearchParams): void {
  for (const name of new Set(params.keys())) {
    // A credential in the query is a security scheme; a name that is itself a value is never printed.
    if (isAuthQueryName(name) || !isSafeName(name)) continue;
    let entry = stats.get(name);
    if (!entry) stats.set(name, (entry = { count: 0, repeated: false, types: new Set(), formats: new Set() }));
    const values = params.getAll(name);
    entry.count += 1;
    entry.repeated ||= values.length > 1 || name.endsWith('[]');
    for (const raw of values) {
      const guess = guessScalar(raw);
      entry.types.add(guess.type);
      entry.formats.add(guess.type === 'string' ? (stringFormat(raw) ?? '') : '');
    }
  }
}

const structured = (body: unknown, contentType: string | undefined) => {
  const parsed = parseBody(body, contentType);
  return parsed && (parsed.kind === 'json' || parsed.kind === 'form') ? parsed.value : undefined;
};

/** Observed origins (`https://api.example.com`), with any user info in the URL dropped. */
export function originOf(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

/**
 * Groups exchanges into operations (method + learned path template) and accumulates each one's query,
 * headers, bodies, statuses and replay signals. Methods OpenAPI cannot describe are left out.
 */
export function collectOperations(exchanges: readonly Exchange[]): {
  operations: OperationStats[];
  templates: PathTemplate[];
} {
  const usable = exchanges.filter((exchange) => (OPENAPI_METHODS as readonly string[]).includes(exchange.method));
  const parsed = usable.map((exchange) => {
    const url = new URL(exchange.url);
    const requestHeaders = headerValues(exchange.request.headers);
    const responseHeaders = headerValues(exchange.response.headers);
    const requestType = requestHeaders.get('content-type')?.[0];
    const responseType = responseHeaders.get('content-type')?.[0];
    return {
      exchange,
      url,
      requestHeaders,
      responseHeaders,
      requestType,
      responseType,
      requestValue: structured(exchange.request.body, requestType),
      responseValue: structured(exchange.response.body, responseType),
    };
  });
  const { templates, templateOf } = inferTemplates(
    parsed.map((p) => ({ path: p.url.pathname, bodies: [p.requestValue, p.responseValue] })),
  );

  const operations = new Map<string, OperationStats>();
  parsed.forEach((p, index) => {
    const { exchange } = p;
    const method = exchange.method as OpenApiMethod;
    const template = templateOf[index]!;
    const key = `${method} ${template}`;
    let op = operations.get(key);
    if (!op) {
      op = {
        method,
        template,
        count: 0,
        firstSeen: exchange.time,
        lastSeen: exchange.time,
        sources: new Set(),
        query: new Map(),
        headers: new Map(),
        requestBodies: new Map(),
        requestBodyCount: 0,
        responses: new Map(),
        signals: emptySignals(),
      };
      operations.set(key, op);
    }
    op.count += 1;
    if (Date.parse(exchange.time) < Date.parse(op.firstSeen)) op.firstSeen = exchange.time;
    if (Date.parse(exchange.time) > Date.parse(op.lastSeen)) op.lastSeen = exchange.time;
    op.sources.add(exchange.source);
    observeQuery(op.query, p.url.searchParams);
    for (const name of p.requestHeaders.keys())
      if (isDocumentedRequestHeader(name)) op.headers.set(name, (op.headers.get(name) ?? 0) + 1);
    if (observeBody(op.requestBodies, exchange.request.body, p.requestType)) op.requestBodyCount += 1;

    let response = op.responses.get(exchange.status);
    if (!response) op.responses.set(exchange.status, (response = { count: 0, content: new Map(), headers: new Set() }));
    response.count += 1;
    observeBody(response.content, exchange.response.body, p.responseType);
    for (const name of p.responseHeaders.keys())
      if (isRateLimitHeader(name) || name === 'link') response.headers.add(name);

    observeSignals(op.signals, {
      requestHeaders: p.requestHeaders,
      responseHeaders: p.responseHeaders,
      queryNames: [...new Set(p.url.searchParams.keys())],
      responseBody: p.responseValue,
    });
  });
  const order = (m: OpenApiMethod) => OPENAPI_METHODS.indexOf(m);
  return {
    operations: [...operations.values()].sort(
      (a, b) => a.template.localeCompare(b.template) || order(a.method) - order(b.method),
    ),
    templates,
  };
}
