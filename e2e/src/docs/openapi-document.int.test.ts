import SwaggerParser from '@apidevtools/swagger-parser';
import { ROUTES } from '@sbc/api';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

describe('GET /docs/openapi.json', () => {
  let stack: AccountSurfaceStack;
  beforeAll(async () => {
    stack = await startStack({ label: 'openapi_document' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('needs no credential and passes a standard OpenAPI 3.1 validator', async () => {
    const res = await fetch(`${stack.edge.url}/docs/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const document = (await res.json()) as Parameters<typeof SwaggerParser.validate>[0];
    await expect(SwaggerParser.validate(document)).resolves.toBeDefined();
    expect(document).toMatchObject({
      openapi: '3.1.0',
      info: { version: '2026-09-23' },
      servers: [{ url: 'https://gw.test' }],
    });
  });

  it(
    'describes every route the edge serves: each documented ' + 'operation answers something other than 404 "no route"',
    async () => {
      for (const route of ROUTES) {
        const path = route.path.replace(/\{[^}]+\}/g, 'x');
        const controller = new AbortController();
        const res = await fetch(`${stack.edge.url}${path}`, {
          method: route.method.toUpperCase(),
          headers: { authorization: `Bearer ${OWNER_KEY}`, 'content-type': 'application/json' },
          body: route.method === 'get' ? undefined : '{}',
          signal: controller.signal,
        });
        // An event stream is served as soon as it opens; it would never end by itself.
        const streaming = res.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
        const body = streaming ? '' : await res.text();
        controller.abort();
        expect({ route: `${route.method} ${route.path}`, noRoute: body.includes('No route') }).toEqual({
          route: `${route.method} ${route.path}`,
          noRoute: false,
        });
      }
    },
  );

  it('the contract checker refuses an answer the document does not describe', () => {
    expect(() => stack.contract.check('GET', '/v1/models', 200, { object: 'list', data: 'nope' })).toThrow(
      /does not match/,
    );
    expect(() => stack.contract.check('GET', '/v1/models', 418, {})).toThrow(/does not document/);
    expect(() => stack.contract.check('GET', '/v1/nowhere', 200, {})).toThrow(/not in/);
  });

  it('lists models in a shape the document describes', async () => {
    const page = await stack.api('GET', '/v1/models?limit=2', { key: OWNER_KEY });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ object: 'list', has_more: true, data: [{ id: 'house' }, { id: 'house-omni' }] });
    const refused = await stack.api('GET', '/v1/models?after_id=a&before_id=b', { key: OWNER_KEY });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error: 'invalid_request',
      param: 'before_id',
      issues: [{ path: 'before_id' }],
    });
  });
});
