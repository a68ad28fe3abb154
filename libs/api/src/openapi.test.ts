import SwaggerParser from '@apidevtools/swagger-parser';
import { ROUTES, buildOpenApiDocument, refusalStatuses } from './index';

const document = buildOpenApiDocument(ROUTES, { baseUrl: 'http://localhost:8080' }) as any;

describe('the OpenAPI document', () => {
  it('passes a standard OpenAPI 3.1 validator', async () => {
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeDefined();
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('2026-09-23');
  });

  it('the validator does catch a broken document', async () => {
    const broken = structuredClone(document);
    broken.paths['/v1/models'].get.parameters[0].in = 'body';
    await expect(SwaggerParser.validate(broken)).rejects.toThrow();
  });

  it('has one operation per route, with a unique operationId', () => {
    const operations = Object.values(document.paths).flatMap((item: any) => Object.values(item)) as any[];
    expect(operations).toHaveLength(ROUTES.length);
    expect(new Set(operations.map((op) => op.operationId)).size).toBe(ROUTES.length);
  });

  it('names the three credentials as security schemes and the scopes of each scoped operation', () => {
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual([
      'callerKey',
      'callerKeyHeader',
      'session',
    ]);
    const chat = document.paths['/v1/chat/completions'].post;
    expect(chat.security).toEqual([
      { callerKey: ['gateway:invoke'] },
      { callerKeyHeader: ['gateway:invoke'] },
      { session: [] },
    ]);
    expect(chat['x-required-scopes']).toEqual(['gateway:invoke']);
    expect(document.paths['/healthz'].get.security).toEqual([]);
  });

  it('describes every refusal of an account route with the shared Error envelope', () => {
    for (const route of ROUTES.filter((r) => !r.errorBody)) {
      const op = document.paths[route.path][route.method];
      for (const status of refusalStatuses(route)) {
        expect(op.responses[String(status)].content['application/json'].schema).toEqual({
          $ref: '#/components/schemas/Error',
        });
      }
    }
    expect(document.components.schemas.Error.required).toEqual(
      expect.arrayContaining(['error', 'message', 'doc_url', 'request_id']),
    );
  });

  it('documents paging parameters on lists and refuses both cursors at once', () => {
    const names = document.paths['/v1/models'].get.parameters.map((p: any) => p.name);
    expect(names).toEqual(['limit', 'after_id', 'before_id']);
    const query = ROUTES.find((route) => route.operationId === 'listModels')!.query!;
    expect(query.safeParse({ limit: '5' }).data).toEqual({ limit: 5 });
    expect(query.safeParse({ after_id: 'a', before_id: 'b' }).success).toBe(false);
    expect(query.safeParse({ limit: '0' }).success).toBe(false);
  });

  it("describes an endpoint's routing weight as a whole number 0-100, always shown and optional to send", () => {
    const { Upstream, UpstreamCreate, UpstreamUpdate } = document.components.schemas;
    for (const schema of [Upstream, UpstreamCreate, UpstreamUpdate]) {
      expect(schema.properties.weight).toMatchObject({ type: 'integer', minimum: 0, maximum: 100 });
      expect(schema.properties.weight.description).toMatch(/0 is standby/);
    }
    expect(Upstream.required).toContain('weight');
    expect(UpstreamCreate.required).not.toContain('weight');
    expect(UpstreamUpdate.required ?? []).not.toContain('weight');
  });

  it('describes the target that served each usage row and its attempts', () => {
    const { UsageGeneration } = document.components.schemas;
    expect(UsageGeneration.properties.served_by).toMatchObject({ type: 'string' });
    expect(UsageGeneration.properties.attempts).toMatchObject({ type: 'integer' });
    expect(UsageGeneration.required).toEqual(expect.arrayContaining(['served_by', 'attempts']));
  });
});
