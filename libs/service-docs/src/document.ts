import { isOpaqueId, type SegmentKind } from './classify';
import type { ObservationSet } from './observation';
import { collectOperations, originOf, type BodyShapes, type OperationStats, type QueryStats } from './operations';
import { authRuleNames, isIdempotent, paginationOf, type Pagination, type SecurityScheme } from './replay';
import { renderShape, type JsonSchema } from './schema';
import type { PathTemplate } from './templates';

/** Per operation, what a replaying agent needs; keyed by operationId in `x-house-replay.operations`. */
export interface ReplayOperation {
  method: string;
  path: string;
  /** Security scheme keys seen (`bearer`, `basic`, `apiKey.header.x-api-key`), plus `none` when a call carried none. */
  auth: string[];
  idempotent: boolean;
  idempotency_header?: string;
  pagination?: Pagination;
  rate_limit_headers: string[];
  content_types: { request: string[]; response: string[] };
  provenance: Provenance;
}

export interface Provenance {
  first_seen: string;
  last_seen: string;
  observations: number;
  source_kinds: string[];
}

export interface ServiceDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, unknown>>;
  components: { securitySchemes: Record<string, SecurityScheme> };
  'x-path-templates': Array<{
    template: string;
    observations: number;
    methods: string[];
    parameters: Array<{ name: string; kinds: SegmentKind[] }>;
    covers: Array<{ pattern: string; observations: number }>;
  }>;
  'x-house-replay': {
    service: string;
    provenance: Provenance;
    servers: string[];
    operations: Record<string, ReplayOperation>;
  };
}

const PARAM_SCHEMA: Partial<Record<SegmentKind, JsonSchema>> = {
  integer: { type: 'integer' },
  uuid: { type: 'string', format: 'uuid' },
  date: { type: 'string', format: 'date' },
  email: { type: 'string', format: 'email' },
};

/** A path parameter's schema: its kind when every value had the same one, else a plain string. */
function pathParamSchema(kinds: readonly SegmentKind[]): JsonSchema {
  return (kinds.length === 1 && PARAM_SCHEMA[kinds[0]!]) || { type: 'string' };
}

/**
 * A query parameter's schema from the JSON types its values read as; strings everywhere on the wire, so any mix is a
 * string.
 */
function querySchema(stats: QueryStats): JsonSchema {
  const types = [...stats.types];
  let item: JsonSchema;
  if (types.length === 1 && types[0] !== 'string') item = { type: types[0] };
  else if (types.every((type) => type === 'integer' || type === 'number')) item = { type: 'number' };
  else {
    item = { type: 'string' };
    const formats = [...stats.formats];
    if (types.length === 1 && formats.length === 1 && formats[0]) item.format = formats[0];
  }
  return stats.repeated ? { type: 'array', items: item } : item;
}

function content(shapes: BodyShapes): Record<string, { schema: JsonSchema }> {
  const media: Record<string, { schema: JsonSchema }> = {};
  for (const [mediaType, shape] of shapes)
    media[mediaType] = { schema: shape ? renderShape(shape) : mediaType.startsWith('text/') ? { type: 'string' } : {} };
  return media;
}

const times = (n: number) => (n === 1 ? 'once' : `${n} times`);

function operationId(op: OperationStats, taken: Set<string>): string {
  const words = op.template
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith('{') ? `By_${part.slice(1, part.indexOf('}'))}` : part))
    .join('_')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1));
  const base = op.method + (words.join('') || 'Root');
  let id = base;
  for (let n = 2; taken.has(id); n += 1) id = `${base}${n}`;
  taken.add(id);
  return id;
}

function provenanceOf(ops: readonly OperationStats[]): Provenance {
  const first = ops.map((op) => op.firstSeen).sort((a, b) => Date.parse(a) - Date.parse(b))[0] ?? '';
  const last = ops.map((op) => op.lastSeen).sort((a, b) => Date.parse(b) - Date.parse(a))[0] ?? '';
  return {
    first_seen: first,
    last_seen: last,
    observations: ops.reduce((n, op) => n + op.count, 0),
    source_kinds: [...new Set(ops.flatMap((op) => [...op.sources]))].sort(),
  };
}

/** One security requirement per distinct set of credentials seen together; `{}` when calls carried none. */
function securityOf(op: OperationStats): Array<Record<string, string[]>> {
  const sets = new Map(op.signals.authPerExchange.map((keys) => [keys.join(' '), keys]));
  return [...sets]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([, keys]) => Object.fromEntries(keys.map((key) => [key, []])));
}

function renderOperation(op: OperationStats, id: string, template: PathTemplate | undefined): Record<string, unknown> {
  const parameters: unknown[] = [];
  for (const param of template?.params ?? [])
    parameters.push({ name: param.name, in: 'path', required: true, schema: pathParamSchema(param.kinds) });
  for (const [name, stats] of op.query)
    parameters.push({ name, in: 'query', required: stats.count === op.count, schema: querySchema(stats) });
  for (const [name, count] of op.headers)
    parameters.push({ name, in: 'header', required: count === op.count, schema: { type: 'string' } });

  const responses: Record<string, unknown> = {};
  for (const [status, response] of [...op.responses].sort((a, b) => a[0] - b[0])) {
    const rendered: Record<string, unknown> = { description: `Observed ${times(response.count)}.` };
    if (response.content.size > 0) rendered.content = content(response.content);
    if (response.headers.size > 0)
      rendered.headers = Object.fromEntries(
        [...response.headers].sort().map((name) => [name, { schema: { type: 'string' } }]),
      );
    responses[String(status)] = rendered;
  }
  return {
    operationId: id,
    summary: `${op.method.toUpperCase()} ${op.template}`,
    description: `Learned from ${op.count} observed exchange${op.count === 1 ? '' : 's'}.`,
    security: securityOf(op),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.requestBodies.size > 0
      ? { requestBody: { required: op.requestBodyCount === op.count, content: content(op.requestBodies) } }
      : {}),
    responses,
  };
}

function replayOf(op: OperationStats): ReplayOperation {
  const replay: ReplayOperation = {
    method: op.method,
    path: op.template,
    auth: authRuleNames(op.signals),
    idempotent: isIdempotent(op.method, op.signals),
    rate_limit_headers: [...op.signals.rateLimitHeaders].sort(),
    content_types: {
      request: [...op.requestBodies.keys()].sort(),
      response: [...new Set([...op.responses.values()].flatMap((r) => [...r.content.keys()]))].sort(),
    },
    provenance: provenanceOf([op]),
  };
  if (op.signals.idempotencyHeader) replay.idempotency_header = op.signals.idempotencyHeader;
  const pagination = paginationOf(op.signals);
  if (pagination) replay.pagination = pagination;
  return replay;
}

/**
 * An origin whose host reads as a name (`api.octo.example`); a host label that looks like an id or an address is a
 * value.
 */
function printableOrigin(url: URL): string {
  const labels = url.hostname.split('.');
  const named = labels.every((label) => /^[a-z][a-z0-9-]*$/i.test(label) && !isOpaqueId(label));
  return named ? originOf(url) : `${url.protocol}//{host}`;
}

/**
 * The OpenAPI 3.1.0 document learned from a service's observations, with `x-path-templates` (each template,
 * its observation count and the placeholder patterns it covers) and `x-house-replay` (per operation: auth
 * rule names, idempotency, paging, rate-limit header names and provenance). It holds shapes and names only:
 * no example or default is ever written, and enums only where `renderShape` allows.
 */
export function learnDocument(set: ObservationSet): ServiceDocument {
  const { operations, templates } = collectOperations(set.exchanges);
  const templateByPath = new Map(templates.map((template) => [template.template, template]));
  const taken = new Set<string>();
  const paths: ServiceDocument['paths'] = {};
  const replay: Record<string, ReplayOperation> = {};
  const schemes: Record<string, SecurityScheme> = {};
  for (const op of operations) {
    const id = operationId(op, taken);
    (paths[op.template] ??= {})[op.method] = renderOperation(op, id, templateByPath.get(op.template));
    replay[id] = replayOf(op);
    for (const [key, scheme] of op.signals.schemes) schemes[key] = scheme;
  }
  const provenance = provenanceOf(operations);
  const origins = [...new Set(set.exchanges.map((exchange) => printableOrigin(new URL(exchange.url))))].sort();
  const servers = origins.filter((origin) => !origin.includes('{'));
  return {
    openapi: '3.1.0',
    info: {
      title: set.service.title,
      version: `learned-${provenance.last_seen.slice(0, 10) || 'empty'}`,
      description:
        `${set.service.description ? `${set.service.description} ` : ''}Learned ` +
        `from ${provenance.observations} observed exchanges: ` +
        `endpoint shapes, header rule names and provenance, never ` +
        `example values or credentials.`,
    },
    ...(servers.length > 0 ? { servers: servers.map((url) => ({ url })) } : {}),
    paths,
    components: {
      securitySchemes: Object.fromEntries(Object.entries(schemes).sort((a, b) => a[0].localeCompare(b[0]))),
    },
    'x-path-templates': templates.map((template) => ({
      template: template.template,
      observations: template.observations,
      methods: operations.filter((op) => op.template === template.template).map((op) => op.method),
      parameters: template.params.map((param) => ({ name: param.name, kinds: param.kinds })),
      covers: [...template.covers]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .map(([pattern, observations]) => ({ pattern, observations })),
    })),
    'x-house-replay': { service: set.service.id, provenance, servers: origins, operations: replay },
  };
}
