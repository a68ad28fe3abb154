import { create } from '@bufbuild/protobuf';
import {
  GetRoutingTableResponseSchema,
  RoutingAliasSchema,
  RoutingUpstreamSchema,
} from '@sbc/proto/sbc/account/v1/account_pb';
import type { Engine, ProviderDeployment } from './engines';
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
      models: ['llama-3', 'shared', 'gpt-x'],
      probedAtMs: 100n,
      weight: 1,
    }),
    create(RoutingUpstreamSchema, {
      slug: 'box',
      dialect: 'openai',
      baseUrl: 'http://box',
      models: ['shared'],
      probedAtMs: 200n,
      weight: 3,
    }),
    create(RoutingUpstreamSchema, {
      slug: 'spare',
      dialect: 'openai',
      baseUrl: 'http://spare',
      models: ['shared'],
      weight: 0,
    }),
  ],
  aliases: [
    create(RoutingAliasSchema, { token: '@mine', vendor: 'lab', modelId: 'llama-3' }),
    create(RoutingAliasSchema, { token: '@quick', vendor: 'house', modelId: 'house-fast' }),
  ],
});

const deployment = (label: string, weight = 1): ProviderDeployment => ({
  dialect: 'openai',
  baseUrl: `http://${label}`,
  apiKey: 'sk',
  headers: {},
  label,
  weight,
});

function context(overrides: Partial<ResolveContext> = {}): ResolveContext {
  return {
    keyRoute: 'auto',
    ownerId: 'usr_1',
    dialAs: 'tenant',
    house: { house: [engine('h1'), engine('h2')], 'house-fast': [engine('fast')] },
    providers: { openai: [{ ...deployment('east'), rpm: 60 }] },
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

const labels = (resolved: ResolvedRoute) => resolved.targets.map((target) => target.label);

describe('model resolution', () => {
  it('serves a house model by its ordered engines, without needing the routing table', () => {
    const resolved = route('house', { table: undefined });
    expect(resolved.callerModel).toBe('house');
    expect(resolved.targets.map((t) => [t.kind, t.label, t.engine.label, t.catalogId, t.healthKey])).toEqual([
      ['house', 'house', 'h1', 'house', 'house:house/h1|http://h1#sim-large'],
      ['house', 'house', 'h2', 'house', 'house:house/h2|http://h2#sim-large'],
    ]);
  });

  it('resolves a personal alias to the endpoint it names, echoing the alias as the model', () => {
    const [target] = route('@mine').targets;
    expect(target).toMatchObject({ kind: 'byo', label: 'byo:lab', upstream: 'byo:lab', callerModel: '@mine' });
    expect(target?.engine).toMatchObject({ dialect: 'anthropic', model: 'llama-3', apiKey: 'k1', dialAs: 'tenant' });
  });

  it('resolves an alias of a house model to the house engines', () => {
    expect(route('@quick').targets[0]).toMatchObject({ kind: 'house', catalogId: 'house-fast', callerModel: '@quick' });
  });

  it('falls back to built-in aliases after the caller’s own', () => {
    expect(route('@gpt', { keyRoute: 'credits' }).targets).toMatchObject([
      { kind: 'provider', upstream: 'provider:openai', label: 'provider:openai/east', catalogId: 'gpt-x' },
    ]);
  });

  it('routes <slug>/<model> to that endpoint alone, with the model part only', () => {
    const resolved = route('box/anything');
    expect(resolved.targets).toHaveLength(1);
    expect(resolved.targets[0]?.engine).toMatchObject({ baseUrl: 'http://box', model: 'anything' });
  });

  it('lists every endpoint listing the model, weighted ones first and standby last', () => {
    for (let i = 0; i < 20; i++) {
      const resolved = route('shared');
      expect(labels(resolved).sort()).toEqual(['byo:box', 'byo:lab', 'byo:spare']);
      expect(labels(resolved)[2]).toBe('byo:spare');
    }
  });

  it('keys an endpoint’s health to its owner, so two accounts’ endpoints of one slug never share a cooldown', () => {
    const mine = route('llama-3').targets[0]!;
    const theirs = route('llama-3', { ownerId: 'usr_2' }).targets[0]!;
    expect(mine.label).toBe(theirs.label);
    expect(mine.healthKey).not.toBe(theirs.healthKey);
  });

  it('serves a catalog model on credits through the provider deployments, with their limits', () => {
    expect(route('gpt-x', { table: undefined }).targets).toMatchObject([
      { kind: 'provider', catalogId: 'gpt-x', limits: { rpm: 60 }, engine: { model: 'gpt-x', label: 'east' } },
    ]);
  });

  it('on route auto, tries the caller’s own endpoints first, then the service’s deployments', () => {
    expect(labels(route('gpt-x'))).toEqual(['byo:lab', 'provider:openai/east']);
  });

  it('balances deployments by weight, standby ones last', () => {
    const providers = { openai: [deployment('standby', 0), deployment('a', 2), deployment('b', 1)] };
    const firsts = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const resolved = labels(route('gpt-x', { table: undefined, providers }));
      expect(resolved[2]).toBe('provider:openai/standby');
      firsts.add(resolved[0]!);
    }
    expect(firsts).toEqual(new Set(['provider:openai/a', 'provider:openai/b']));
  });

  it('refuses a catalog model whose vendor has no service engine', () => {
    expect(resolveModel('claude-x', context())).toMatchObject({ refused: 'not_configured' });
  });

  it('refuses an unknown model as not found', () => {
    expect(resolveModel('nope', context())).toMatchObject({ refused: 'not_found' });
  });

  it('keeps a byo key to its own endpoints: never credits', () => {
    expect(resolveModel('house', context({ keyRoute: 'byo' }))).toMatchObject({ refused: 'not_allowed' });
    expect(resolveModel('claude-x', context({ keyRoute: 'byo' }))).toMatchObject({ refused: 'not_allowed' });
    expect(labels(route('gpt-x', { keyRoute: 'byo' }))).toEqual(['byo:lab']);
    expect(route('llama-3', { keyRoute: 'byo' }).targets[0]?.kind).toBe('byo');
  });

  it('keeps a credits key off the caller’s endpoints', () => {
    expect(resolveModel('llama-3', context({ keyRoute: 'credits' }))).toMatchObject({ refused: 'not_found' });
    expect(resolveModel('lab/llama-3', context({ keyRoute: 'credits' }))).toMatchObject({ refused: 'not_allowed' });
    expect(labels(route('gpt-x', { keyRoute: 'credits' }))).toEqual(['provider:openai/east']);
    expect(route('house', { keyRoute: 'credits' }).targets[0]?.kind).toBe('house');
  });
});
