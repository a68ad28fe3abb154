import { createBody, EMPTY_KEY_FORM, modelList, updateBody } from './key-form';

describe('the key form as a request body', () => {
  it('mints with a preset, or with the chosen scopes instead', () => {
    expect(createBody({ ...EMPTY_KEY_FORM, name: ' ci ', preset: 'read_only' })).toMatchObject({
      name: 'ci',
      preset: 'read_only',
    });
    const custom = createBody({ ...EMPTY_KEY_FORM, name: 'ci', preset: 'custom', scopes: ['usage:read'] });
    expect(custom).toMatchObject({ scopes: ['usage:read'] });
    expect(custom).not.toHaveProperty('preset');
  });

  it('reads caps as whole numbers and leaves blank ones out of a mint', () => {
    expect(createBody({ ...EMPTY_KEY_FORM, name: 'k', daily: '500', monthly: '' })).toMatchObject({
      daily_limit_tokens: 500,
      monthly_limit_tokens: undefined,
    });
  });

  it('clears a blank cap, limit or allow-list on edit (null), rather than keeping the old one', () => {
    expect(updateBody({ ...EMPTY_KEY_FORM, name: 'k' })).toMatchObject({
      allowed_models: null,
      allowed_tools: null,
      daily_limit_tokens: null,
      monthly_limit_tokens: null,
      rpm: null,
      tpm: null,
    });
  });

  it("sends a key's own per-minute limits when given", () => {
    expect(createBody({ ...EMPTY_KEY_FORM, name: 'k', rpm: '60', tpm: '' })).toMatchObject({ rpm: 60, tpm: undefined });
    expect(updateBody({ ...EMPTY_KEY_FORM, name: 'k', tpm: '20000' })).toMatchObject({ tpm: 20_000 });
  });

  it('splits allowed models on commas and white space', () => {
    expect(modelList('gpt-*, claude-?\n sim-large')).toEqual(['gpt-*', 'claude-?', 'sim-large']);
    expect(modelList('  ')).toBeUndefined();
  });

  it('sends allowed MCP tools as a list of server__tool globs, blank as every tool', () => {
    expect(createBody({ ...EMPTY_KEY_FORM, name: 'k', allowedTools: 'github__*, everything__echo' })).toMatchObject({
      allowed_tools: ['github__*', 'everything__echo'],
    });
    expect(createBody({ ...EMPTY_KEY_FORM, name: 'k' }).allowed_tools).toBeUndefined();
    expect(updateBody({ ...EMPTY_KEY_FORM, name: 'k', allowedTools: 'x__y' })).toMatchObject({
      allowed_tools: ['x__y'],
    });
  });

  it('sends the response cache TTL as whole seconds, a blank one as 0 (off), on mint and on edit', () => {
    expect(createBody({ ...EMPTY_KEY_FORM, name: 'k', cacheTtl: '3600', cacheTools: true })).toMatchObject({
      cache_ttl_s: 3600,
      cache_tools: true,
    });
    expect(createBody({ ...EMPTY_KEY_FORM, name: 'k' })).toMatchObject({ cache_ttl_s: 0, cache_tools: false });
    expect(updateBody({ ...EMPTY_KEY_FORM, name: 'k', cacheTtl: ' ' })).toMatchObject({ cache_ttl_s: 0 });
  });
});
