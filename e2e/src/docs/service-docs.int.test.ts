import SwaggerParser from '@apidevtools/swagger-parser';
import { SERVICE_CATALOG } from '@sbc/service-docs';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

describe('GET /docs/services/{service_id}.json', () => {
  let stack: AccountSurfaceStack;
  beforeAll(async () => {
    stack = await startStack({ label: 'service_docs' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it.each([...SERVICE_CATALOG.keys()])('serves %s without a credential as a valid OpenAPI 3.1 document', async (id) => {
    const res = await stack.api('GET', `/docs/services/${id}.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ openapi: '3.1.0', 'x-house-replay': { service: id } });
    expect(Array.isArray(res.body['x-path-templates'])).toBe(true);
    expect(res.body.request_id).toBeUndefined();
    await expect(SwaggerParser.validate(res.body)).resolves.toBeDefined();
  });

  it('a live caller key is also accepted', async () => {
    const res = await stack.api('GET', '/docs/services/octo-issues.json', { key: OWNER_KEY });
    expect(res.status).toBe(200);
  });

  it('an unknown service id is 404 not_found in the shared Error envelope', async () => {
    const res = await stack.api('GET', '/docs/services/no-such-service.json');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      error: 'not_found',
      param: 'service_id',
      request_id: res.headers.get('x-request-id'),
    });
    expect(typeof res.body.message).toBe('string');
    expect(res.body.doc_url).toMatch(/#errors-not_found$/);
  });

  it('the path needs its .json suffix (an undocumented path, so checked without the contract client)', async () => {
    const res = await fetch(`${stack.edge.url}/docs/services/octo-issues`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'not_found' });
  });
});
