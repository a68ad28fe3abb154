import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { parseBody } from './bodies';
import { learnServiceDocument, learnShippedDocuments, SERVICE_CATALOG } from './catalog';
import type { ServiceDocument } from './document';
import type { ExchangeInput } from './observation';

const documents = learnShippedDocuments();
const ids = [...SERVICE_CATALOG.keys()];

/** Every object under a `schema` key, with where it sits. */
function schemasIn(node: unknown, at = ''): Array<[string, object]> {
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => [
    ...(key === 'schema' && value && typeof value === 'object' ? [[`${at}/${key}`, value] as [string, object]] : []),
    ...schemasIn(value, `${at}/${key}`),
  ]);
}

/** Every object key in a document except the names listed under `properties` (those are field names, not keywords). */
function keywordsIn(node: unknown): string[] {
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === 'properties' && value && typeof value === 'object'
      ? Object.values(value).flatMap(keywordsIn)
      : [key, ...keywordsIn(value)],
  );
}

/** The document's template for a concrete path: the most specific match, as a router would pick it. */
function templateFor(document: ServiceDocument, path: string): string {
  const matches = Object.keys(document.paths).filter((template) =>
    new RegExp('^' + template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+') + '$').test(path),
  );
  return matches.sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))[0]!;
}

describe('shipped service documents', () => {
  it('at least three services are shipped', () => {
    expect(ids.sort()).toEqual(['ledgerly', 'octo-issues', 'parcelpost']);
  });

  it.each(ids)('%s passes a standard OpenAPI 3.1 validator', async (id) => {
    const document = documents.get(id)!;
    expect(document.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it('the validator does catch a broken document', async () => {
    const broken = structuredClone(documents.get('octo-issues')!) as any;
    broken.paths['/users/{user}'].get.parameters[0].in = 'body';
    await expect(SwaggerParser.validate(broken)).rejects.toThrow();
  });

  it.each(ids)('%s: every operation declares exactly the parameters its path template names', (id) => {
    for (const [template, item] of Object.entries(documents.get(id)!.paths)) {
      const named = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const op of Object.values(item) as any[]) {
        const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
        expect({ template, declared }).toEqual({ template, declared: named });
      }
    }
  });

  it.each(ids)(
    '%s: every schema compiles with ajv (JSON Schema 2020-12) and accepts every body it was learned from',
    (id) => {
      const document = documents.get(id)!;
      const ajv = addFormats(new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true }));
      const schemas = schemasIn(document.paths);
      expect(schemas.length).toBeGreaterThan(10);
      for (const [, schema] of schemas) expect(() => ajv.compile(schema)).not.toThrow();
      for (const exchange of SERVICE_CATALOG.get(id)!.exchanges) {
        const op = document.paths[templateFor(document, new URL(exchange.url).pathname)]![exchange.method] as any;
        const checks: Array<[unknown, unknown]> = [];
        const response = parseBody(
          exchange.response.body,
          exchange.response.headers['content-type'] as string | undefined,
        );
        if (response?.kind === 'json')
          checks.push([op.responses[exchange.status].content[response.mediaType].schema, response.value]);
        const request = parseBody(
          exchange.request.body,
          exchange.request.headers['content-type'] as string | undefined,
        );
        if (request?.kind === 'json' || request?.kind === 'form')
          checks.push([op.requestBody.content[request.mediaType].schema, request.value]);
        for (const [schema, value] of checks) {
          const validate = ajv.compile(schema as object);
          expect({ url: exchange.url, ok: validate(value), errors: validate.errors ?? null }).toEqual({
            url: exchange.url,
            ok: true,
            errors: null,
          });
        }
      }
    },
  );

  it.each(ids)('%s never writes an example or a default', (id) => {
    expect(keywordsIn(documents.get(id)).filter((key) => ['example', 'examples', 'default'].includes(key))).toEqual([]);
  });

  it(
    'octo-issues: nested resources become templates, paged by the Link header, with bearer auth and rate-limit ' +
      'header names',
    () => {
      const document = documents.get('octo-issues')!;
      expect(Object.keys(document.paths)).toEqual([
        '/rate_limit',
        '/repos/{owner}/{repo}',
        '/repos/{owner}/{repo}/issues',
        '/repos/{owner}/{repo}/issues/{number}',
        '/repos/{owner}/{repo}/issues/{number}/comments',
        '/users/{user}',
      ]);
      const issue = document['x-path-templates'].find((t) => t.template === '/repos/{owner}/{repo}/issues/{number}')!;
      expect(issue).toEqual({
        template: '/repos/{owner}/{repo}/issues/{number}',
        observations: 5,
        methods: ['get', 'patch'],
        parameters: [
          { name: 'owner', kinds: ['slug'] },
          { name: 'repo', kinds: ['slug'] },
          { name: 'number', kinds: ['integer'] },
        ],
        covers: [{ pattern: '/repos/{slug}/{slug}/issues/{integer}', observations: 5 }],
      });
      const replay = document['x-house-replay'].operations;
      expect(replay.getReposByOwnerByRepoIssues).toMatchObject({
        auth: ['bearer'],
        idempotent: true,
        pagination: { style: 'link-header', header: 'link', query: ['page', 'per_page'] },
      });
      expect(replay.getReposByOwnerByRepoIssues!.rate_limit_headers).toEqual([
        'retry-after',
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
        'x-ratelimit-used',
      ]);
      expect(replay.postReposByOwnerByRepoIssues).toMatchObject({
        idempotent: false,
        content_types: { request: ['application/json'], response: ['application/json'] },
      });
      expect(replay.patchReposByOwnerByRepoIssuesByNumber!.provenance).toEqual({
        first_seen: '2026-01-22T17:05:00Z',
        last_seen: '2026-01-23T10:10:10Z',
        observations: 2,
        source_kinds: ['har', 'proxy'],
      });
      expect(document['x-house-replay'].provenance).toEqual({
        first_seen: '2026-01-12T09:14:03Z',
        last_seen: '2026-02-20T15:59:59Z',
        observations: 22,
        source_kinds: ['har', 'proxy'],
      });
      expect(document.components.securitySchemes).toEqual({ bearer: { type: 'http', scheme: 'bearer' } });
      const issues = document.paths['/repos/{owner}/{repo}/issues']!.get as any;
      expect(Object.keys(issues.responses)).toEqual(['200', '403']);
      expect(issues.parameters.map((p: any) => `${p.in}:${p.name}`)).toEqual([
        'path:owner',
        'path:repo',
        'query:state',
        'query:per_page',
        'query:page',
        'query:labels',
        'header:x-octo-api-version',
      ]);
    },
  );

  it('ledgerly: cursor paging, an action beside ids, and idempotency keys make POSTs safe to retry', () => {
    const document = documents.get('ledgerly')!;
    expect(Object.keys(document.paths)).toEqual([
      '/v1/balance',
      '/v1/customers',
      '/v1/customers/{customer}',
      '/v1/customers/search',
      '/v1/invoices',
      '/v1/invoices/{invoice}',
      '/v1/invoices/{invoice}/pay',
    ]);
    const replay = document['x-house-replay'].operations;
    expect(replay.getV1Customers!.pagination).toEqual({
      style: 'cursor',
      query: ['limit', 'starting_after'],
      fields: ['has_more'],
    });
    expect(replay.postV1Customers).toMatchObject({ idempotent: true, idempotency_header: 'idempotency-key' });
    expect(replay.deleteV1CustomersByCustomer).toMatchObject({ idempotent: true });
    expect(replay.getV1Invoices!.rate_limit_headers).toEqual([
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'retry-after',
    ]);
    const list = (document.paths['/v1/customers']!.get as any).responses['200'].content['application/json'].schema;
    expect(list.properties.object).toEqual({ type: 'string', enum: ['list'] });
    expect(list.properties.data.items.properties.email).toEqual({ type: 'string', format: 'email' });
  });

  it('parcelpost: form and JSON bodies, a UUID and a date parameter, offset paging, two auth rules', () => {
    const document = documents.get('parcelpost')!;
    expect(Object.keys(document.paths)).toEqual([
      '/oauth/token',
      '/v2/manifests/{date}',
      '/v2/shipments',
      '/v2/shipments/{shipment_id}',
      '/v2/shipments/{shipment_id}/labels',
      '/v2/tracking/{tracking_number}',
    ]);
    const token = (document.paths['/oauth/token']!.post as any).requestBody.content['application/x-www-form-urlencoded']
      .schema;
    expect(token.properties.grant_type).toEqual({ type: 'string', enum: ['client_credentials'] });
    expect(token.properties.client_secret).toEqual({ type: 'string' });
    const labels = (document.paths['/v2/shipments/{shipment_id}/labels']!.post as any).requestBody.content[
      'application/json'
    ].schema;
    expect(labels.required).toEqual(['format']);
    const manifest = (document.paths['/v2/manifests/{date}']!.get as any).parameters[0];
    expect(manifest).toEqual({ name: 'date', in: 'path', required: true, schema: { type: 'string', format: 'date' } });
    const replay = document['x-house-replay'].operations;
    expect(replay.getV2Shipments!.pagination).toEqual({ style: 'offset', query: ['limit', 'offset'] });
    expect(replay.getV2ManifestsByDate!.auth).toEqual(['apiKey.header.x-api-key']);
    expect(replay.postOauthToken!.auth).toEqual(['none']);
    expect(Object.keys(document.components.securitySchemes)).toEqual(['apiKey.header.x-api-key', 'bearer']);
  });
});

describe('learning from exchanges recorded at run time', () => {
  const extra: ExchangeInput[] = [
    {
      method: 'GET',
      url: 'https://api.octo.example/repos/octo/hello/labels',
      status: 200,
      time: '2026-04-01T10:00:00Z',
      source: 'run',
      request: { headers: { authorization: 'Bearer octo_pat_RUNTIME' } },
      response: { headers: { 'content-type': 'application/json' }, body: [{ id: 1, name: 'bug', color: 'd73a4a' }] },
    },
    {
      method: 'GET',
      url: 'https://api.octo.example/repos/octo/hello/issues/46',
      status: 200,
      time: '2026-04-01T10:00:01Z',
      source: 'run',
      response: {
        headers: { 'content-type': 'application/json' },
        body: { number: 46, state: 'open', milestone: null },
      },
    },
  ];

  it('merges by service id into the shipped observations: new operations appear, counts and provenance grow', () => {
    const document = learnServiceDocument('octo-issues', extra)!;
    expect(document.paths['/repos/{owner}/{repo}/labels']).toBeDefined();
    expect(document['x-house-replay'].provenance).toMatchObject({
      last_seen: '2026-04-01T10:00:01Z',
      observations: 24,
      source_kinds: ['har', 'proxy', 'run'],
    });
    expect(document['x-house-replay'].operations.getReposByOwnerByRepoIssuesByNumber!.auth).toEqual(['bearer', 'none']);
    expect(
      document['x-path-templates'].find((t) => t.template === '/repos/{owner}/{repo}/issues/{number}')!.observations,
    ).toBe(6);
    // The shipped document is unchanged.
    expect(documents.get('octo-issues')!['x-house-replay'].provenance.observations).toBe(22);
  });

  it('an unknown service id has no document, and malformed exchanges are refused', () => {
    expect(learnServiceDocument('no-such-service')).toBeUndefined();
    expect(() => learnServiceDocument('octo-issues', [{ ...extra[0], source: 'Free text here' }])).toThrow();
    expect(() => learnServiceDocument('octo-issues', [{ ...extra[0], url: 'ftp://x' }])).toThrow();
  });
});
