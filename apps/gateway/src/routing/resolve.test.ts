import { create } from '@bufbuild/protobuf';
import {
  GetRoutingTableResponseSchema,
  RoutingAliasSchema,
  RoutingUpstreamSchema,
} from '@sbc/proto/sbc/account/v1/account_pb';
import type { Engine } from './engines';
import { isRefusal, resolveModel, type ResolveContext, type ResolvedRoute } from './resolve';

const engine = (label: string, model = 'sim-large'): Engine => ({
  dialect: 'openai',
  baseUrl: `http://${label}`,
  model,
  headers: {},
  label,
});

const table = create(GetRoutingTableResponseSchema, {
  upstreams: [
    create(RoutingUpstreamSchema, {
      slug: 'lab',
      dialect: 'anthropic',
      baseUrl: 'http://lab',
      apiKey: 'k1',
      models: ['llama-3', 'shared'],
      probedAtMs: 100n,
    }),
    create(RoutingUpstreamSchema, {
      slug: 'box',
      dialect: 'openai',
      baseUrl: 'http://box',
      models: ['shared'],
      probedAtMs: 200n,
    }),
  ],
  aliases: [
    create(RoutingAliasSchema, { token: '@mine', vendor: 'lab', modelId: 'llama-3' }),
    create(RoutingAliasSchema, { token: '@quick', vendor: 'house', modelId: 'house-fast' }),
  ],
});

function context(overrides: Partial<ResolveContext> = {}): ResolveContext {
  return {
    keyRoute: 'auto',
    house: { house: [engine('h1'), engine('h2')], 'house-fast': [engine('fast')] },
    providers: { openai: { dialect: 'openai', baseUrl: 'http://openai', apiKey: 'sk', headers: {}, label: 'openai' } },
    table,
    catalogVendor: (id) => ({ 'gpt-x': 'openai', 'claude-x': 'anthropic' })[id],
    builtInAlias: (token) => (token === '@gpt' ? { vendor: 'openai', modelId: 'gpt-x' } : undefined),
    ...overrides,
  };
}

function route(model: string, overrides: Partial<ResolveContext> = {}): ResolvedRoute {
  const resolved = resolveModel(model, context(overrides));
  if (isRefusal(resolved)) throw new Error(`refused: ${resolved.message}`);
  return resolved;
}

describe('model resolution', () => {
  it('serves a house model by its ordered engines, without needing the routing table', () => {
    const resolved = route('house', { table: undefined });
    expect(resolved).toMatchObject({ kind: 'house', upstream: 'house', catalogId: 'house', callerModel: 'house' });
    expect(resolved.engines.map((e) => e.label)).toEqual(['h1', 'h2']);
  });

  it('resolves a personal alias to the endpoint it names, echoing the alias as the model', () => {
    const resolved = route('@mine');
    expect(resolved).toMatchObject({ kind: 'byo', upstream: 'byo:lab', callerModel: '@mine' });
    expect(resolved.engines[0]).toMatchObject({ dialect: 'anthropic', model: 'llama-3', apiKey: 'k1' });
  });

  it('resolves an alias of a house model to the house engines', () => {
    expect(route('@quick')).toMatchObject({ kind: 'house', catalogId: 'house-fast', callerModel: '@quick' });
  });

  it('falls back to built-in aliases after the caller’s own', () => {
    expect(route('@gpt')).toMatchObject({ kind: 'provider', upstream: 'provider:openai', catalogId: 'gpt-x' });
  });

  it('routes <slug>/<model> to that endpoint with the model part only', () => {
    expect(route('box/anything').engines[0]).toMatchObject({ baseUrl: 'http://box', model: 'anything' });
  });

  it('picks the most recently probed endpoint when two list the model', () => {
    expect(route('shared').upstream).toBe('byo:box');
  });

  it('serves a catalog model on credits through the provider engine', () => {
    expect(route('gpt-x')).toMatchObject({ kind: 'provider', catalogId: 'gpt-x' });
  });

  it('refuses a catalog model whose vendor has no service engine', () => {
    expect(resolveModel('claude-x', context())).toMatchObject({ refused: 'not_configured' });
  });

  it('refuses an unknown model as not found', () => {
    expect(resolveModel('nope', context())).toMatchObject({ refused: 'not_found' });
  });

  it('keeps a byo key to its own endpoints', () => {
    expect(resolveModel('house', context({ keyRoute: 'byo' }))).toMatchObject({ refused: 'not_allowed' });
    expect(resolveModel('gpt-x', context({ keyRoute: 'byo' }))).toMatchObject({ refused: 'not_allowed' });
    expect(route('llama-3', { keyRoute: 'byo' }).kind).toBe('byo');
  });

  it('keeps a credits key off the caller’s endpoints', () => {
    expect(resolveModel('llama-3', context({ keyRoute: 'credits' }))).toMatchObject({ refused: 'not_found' });
    expect(resolveModel('lab/llama-3', context({ keyRoute: 'credits' }))).toMatchObject({ refused: 'not_allowed' });
    expect(route('house', { keyRoute: 'credits' }).kind).toBe('house');
  });
});
