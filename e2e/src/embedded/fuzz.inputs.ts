import fc from 'fast-check';

/**
 * Request generators for the fuzz suite, read from the served OpenAPI document: for every operation, its
 * path and query parameters and its JSON body drawn from the schema (valid values most of the time), from
 * the schema's boundaries (one past every minimum, maximum and length), and from values no schema admits
 * (wrong types, NUL, unpaired surrogates, malformed percent-escapes, invalid UTF-8, deep nesting).
 */

type Schema = Record<string, unknown>;
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  security?: Array<Record<string, string[]>>;
}

export interface FuzzOperation {
  method: string;
  /** The path template, e.g. `/v1/teams/{team_id}`. */
  path: string;
  pathParams: string[];
  query: Parameter[];
  body?: Schema;
  /** Reached without a credential at all (sign-up, sign-in, pairing, docs, health). */
  open: boolean;
  /** Only a signed-in session may call it (sign-out, pairing approval). */
  sessionOnly: boolean;
}

/** A generated request: the path already filled in (escapes kept as generated) and the body as sent. */
export interface FuzzRequest {
  url: string;
  body?: string | Uint8Array;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * Percent-encodes any JS string: an unpaired surrogate (which has no UTF-8 form) goes out as the bytes a careless
 * encoder would send.
 */
function escape(text: string): string {
  return text
    .split(/([\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF])/)
    .map((part) => (part.length === 1 && /[\uD800-\uDFFF]/.test(part) ? '%ed%a0%80' : encodeURIComponent(part)))
    .join('');
}

export function operationsOf(document: OpenApiDocument): FuzzOperation[] {
  const operations: FuzzOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const parameters = op.parameters ?? [];
      const security = op.security ?? [];
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!),
        query: parameters.filter((parameter) => parameter.in === 'query'),
        body: op.requestBody?.content?.['application/json']?.schema,
        open: security.length === 0,
        sessionOnly:
          security.length > 0 && security.every((scheme) => Object.keys(scheme).every((name) => name === 'session')),
      });
    }
  }
  return operations;
}

/** What a test knows that a schema cannot: real ids and model names, so generated requests reach past lookups. */
export interface FuzzPools {
  ids: string[];
  strings: string[];
}

// Values no field admits, or that sit on the edge of what text and numbers may be.
const NUMBER_EDGES = [-1, 0, 0.5, 2 ** 31 - 1, 2 ** 31, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, 1e308, -1e308, -0];
const STRING_EDGES = [
  '',
  ' ',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '😀',
  'e\u0301',
  '\u202e',
  '%ff',
  '../../etc/passwd',
  '<script>',
  "'; drop table x; --",
  'x'.repeat(5_000),
];
/**
 * Dates and date-times as a schema admits them, from year 0 to year 9999: mostly recent ones, and the ends of
 * the range that JavaScript writes with four digits (PostgreSQL has no year 0; a day past 9999 has five).
 */
const instants = fc.oneof(
  fc.date({ min: new Date(2020, 0, 1), max: new Date(2030, 0, 1), noInvalidDate: true }),
  fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }),
  fc.constantFrom(
    ...['0000-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '9999-12-31T00:00:00Z', '9999-12-31T23:59:59.999Z'].map(
      (text) => new Date(text),
    ),
  ),
);

const hostileValue = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': 1 }, ...NUMBER_EDGES, ...STRING_EDGES),
  // Every UTF-16 code unit, unpaired surrogates included.
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)), maxLength: 12 }),
);

export class SchemaArbitraries {
  constructor(
    private readonly document: OpenApiDocument,
    private readonly pools: FuzzPools,
  ) {}

  private resolve(schema: Schema): Schema {
    let current = schema;
    for (let hops = 0; typeof current.$ref === 'string' && hops < 10; hops++) {
      current = this.document.components?.schemas?.[current.$ref.split('/').pop()!] ?? {};
    }
    return current;
  }

  /** A value for `schema`: valid most of the time, else on a boundary, else hostile. */
  value(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
    if (!schema) return hostileValue;
    const resolved = this.resolve(schema);
    return fc.oneof(
      { weight: 5, arbitrary: this.valid(resolved, depth) },
      { weight: 2, arbitrary: this.boundary(resolved) },
      { weight: 1, arbitrary: hostileValue },
    );
  }

  valid(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const variants = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
    if (variants && variants.length > 0) return fc.oneof(...variants.map((variant) => this.valid(variant, depth)));
    if (Array.isArray(s.allOf) && s.allOf.length > 0) return this.valid(s.allOf[0] as Schema, depth);
    if (Array.isArray(s.enum) && s.enum.length > 0) return fc.constantFrom(...(s.enum as unknown[]));
    if ('const' in s) return fc.constant(s.const);
    const type = Array.isArray(s.type)
      ? (s.type as string[]).find((t) => t !== 'null')
      : (s.type as string | undefined);
    switch (type) {
      case 'string':
        return this.string(s);
      case 'integer': {
        const min = typeof s.minimum === 'number' ? Math.max(s.minimum, -(2 ** 40)) : -1_000;
        const max = typeof s.maximum === 'number' ? Math.min(s.maximum, 2 ** 40) : 1_000_000;
        return fc.integer({ min: Math.ceil(min), max: Math.floor(Math.max(min, max)) });
      }
      case 'number':
        return fc.double({
          min: typeof s.minimum === 'number' ? s.minimum : -1e6,
          max: typeof s.maximum === 'number' ? s.maximum : 1e6,
          noNaN: true,
        });
      case 'boolean':
        return fc.boolean();
      case 'array': {
        if (depth > 3) return fc.constant([]);
        const items = s.items as Schema | undefined;
        return fc.array(items ? this.valid(items, depth + 1) : fc.string({ maxLength: 8 }), {
          maxLength: Math.min(3, typeof s.maxItems === 'number' ? s.maxItems : 3),
        });
      }
      case 'object':
        return depth > 3 ? fc.constant({}) : this.object(s, depth);
      default:
        return s.properties ? this.object(s, depth) : fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean());
    }
  }

  private string(s: Schema): fc.Arbitrary<unknown> {
    const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
    const maxLength = Math.max(minLength, Math.min(typeof s.maxLength === 'number' ? s.maxLength : 40, 40));
    const options: fc.Arbitrary<unknown>[] = [fc.string({ unit: 'grapheme', minLength, maxLength })];
    if (s.format === 'email') options.push(fc.emailAddress());
    if (s.format === 'uri') options.push(fc.webUrl());
    if (s.format === 'date-time') options.push(instants.map((date) => date.toISOString()));
    if (s.format === 'date') options.push(instants.map((date) => date.toISOString().slice(0, 10)));
    if (typeof s.pattern === 'string') {
      try {
        options.push(
          fc.stringMatching(new RegExp(s.pattern)).filter((text) => text.length <= Math.max(maxLength, 200)),
        );
      } catch {
        // A pattern JavaScript cannot compile is left to the other generators.
      }
    }
    if (this.pools.ids.length > 0) options.push(fc.constantFrom(...this.pools.ids));
    if (this.pools.strings.length > 0) options.push(fc.constantFrom(...this.pools.strings));
    return fc.oneof(...options);
  }

  private object(s: Schema, depth: number): fc.Arbitrary<unknown> {
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    const required = new Set((s.required ?? []) as string[]);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, property] of Object.entries(properties)) model[name] = this.valid(property, depth + 1);
    return fc.record(model, { requiredKeys: [...required].filter((name) => name in model) });
  }

  /** A valid value with one thing wrong: for an object, one field (named or not) set to a boundary or hostile value. */
  mutated(schema: Schema): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const properties = Object.entries((s.properties ?? {}) as Record<string, Schema>);
    if (properties.length === 0) return this.value(s);
    const field = fc.oneof(
      ...properties.map(([name, property]) =>
        fc.tuple(fc.constant(name), fc.oneof(this.boundary(property), hostileValue)),
      ),
      fc.tuple(fc.string({ maxLength: 10 }), hostileValue),
    );
    return fc.tuple(this.valid(s, 0), field).map(([value, [name, bad]]) => ({ ...(value as object), [name]: bad }));
  }

  /** One past each edge the schema states, and the edges of numbers and text in general. */
  boundary(schema: Schema): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const edges: unknown[] = [...NUMBER_EDGES];
    for (const bound of [s.minimum, s.maximum]) if (typeof bound === 'number') edges.push(bound - 1, bound, bound + 1);
    for (const bound of [s.minLength, s.maxLength])
      if (typeof bound === 'number') edges.push('x'.repeat(Math.max(0, bound - 1)), 'é'.repeat(bound + 1));
    for (const bound of [s.minItems, s.maxItems])
      if (typeof bound === 'number') edges.push(Array.from({ length: bound + 1 }, () => 'x'));
    return fc.constantFrom(...edges);
  }
}

/**
 * Path segments as an attacker writes them: escapes that are malformed, spell invalid UTF-8 or a NUL, and traversal.
 */
const RAW_SEGMENTS = [
  '%ff',
  '%00',
  'a%00b',
  '%',
  '%e2%82',
  '%ed%a0%80',
  '%c0%af',
  '%2e%2e',
  '%2f',
  '..%2f..',
  '%F0%9F%98%80',
  'x'.repeat(3_000),
];

/**
 * Bodies no parser should take: invalid JSON, bytes that are not UTF-8, nesting past the limit, wrong top-level types.
 */
const RAW_BODIES: Array<string | Uint8Array> = [
  '{',
  '{"a":}',
  '[]',
  'null',
  '"text"',
  '1e999',
  '{"__proto__":{"polluted":true}}',
  '['.repeat(65) + ']'.repeat(65),
  '{"a":'.repeat(200) + '1' + '}'.repeat(200),
  Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
];

export function requestArbitrary(
  op: FuzzOperation,
  schemas: SchemaArbitraries,
  pools: FuzzPools,
): fc.Arbitrary<FuzzRequest> {
  const segment = fc.oneof(
    { weight: 3, arbitrary: pools.ids.length > 0 ? fc.constantFrom(...pools.ids) : fc.constant('x') },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map(escape) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
  );
  const path = fc.tuple(...op.pathParams.map(() => segment)).map((values) => {
    let index = 0;
    return op.path.replace(/\{[^}]+\}/g, () => values[index++]!);
  });
  const queryValue = (parameter: Parameter) =>
    fc.oneof(
      {
        weight: 4,
        arbitrary: schemas
          .value(parameter.schema)
          .map((value) => escape(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))),
      },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
    );
  const query = fc
    .tuple(
      ...op.query.map((parameter) =>
        fc.option(
          queryValue(parameter).map((value) => `${escape(parameter.name)}=${value}`),
          { freq: 2 },
        ),
      ),
    )
    .map((pairs) => pairs.filter((pair): pair is string => pair !== null).join('&'));
  const body: fc.Arbitrary<string | Uint8Array | undefined> = op.body
    ? fc.oneof(
        { weight: 3, arbitrary: schemas.valid(op.body, 0).map((value) => JSON.stringify(value)) },
        { weight: 3, arbitrary: schemas.mutated(op.body).map((value) => JSON.stringify(value)) },
        { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES) },
      )
    : fc.constant(undefined);
  return fc.record({ path, query, body }).map(({ path: filled, query: search, body: sent }) => ({
    url: search ? `${filled}?${search}` : filled,
    body: sent,
  }));
}
