import { globCovers, modelsCovered, wideningOf, type KeyBounds } from './key-bounds';

const caller: KeyBounds = {
  scopes: ['gateway:invoke', 'keys:read', 'keys:write'],
  allowedModels: null,
  allowedTools: null,
  dailyLimitCredits: null,
  monthlyLimitCredits: null,
  rpm: null,
  tpm: null,
  route: 'auto',
  orgId: null,
};

describe('a key is never minted or edited wider than the calling key', () => {
  it('allows a key equal to or narrower than the caller', () => {
    expect(wideningOf(caller, caller)).toBeNull();
    expect(
      wideningOf(caller, {
        ...caller,
        scopes: ['gateway:invoke'],
        allowedModels: ['gpt-*'],
        dailyLimitCredits: 5,
        route: 'byo',
      }),
    ).toBeNull();
  });

  it('refuses a scope the caller lacks, naming it', () => {
    expect(wideningOf(caller, { ...caller, scopes: ['gateway:invoke', 'usage:read'] })).toMatchObject({
      param: 'scopes',
      missingScopes: ['usage:read'],
    });
  });

  it('a caller limited to some models mints only keys limited to models within them', () => {
    const limited = { ...caller, allowedModels: ['gpt-*', 'house'] };
    expect(wideningOf(limited, { ...caller, allowedModels: null })).toMatchObject({ param: 'allowed_models' });
    expect(wideningOf(limited, { ...caller, allowedModels: ['claude-*'] })).toMatchObject({ param: 'allowed_models' });
    expect(wideningOf(limited, { ...caller, allowedModels: ['gpt-4o', 'gpt-4*', 'house'] })).toBeNull();
    expect(wideningOf(limited, { ...caller, allowedModels: [] })).toBeNull();
  });

  it('a caller limited to some MCP tools mints only keys limited to tools within them', () => {
    const limited = { ...caller, allowedTools: ['github__*', 'everything__echo'] };
    expect(wideningOf(limited, { ...caller, allowedTools: null })).toMatchObject({ param: 'allowed_tools' });
    expect(wideningOf(limited, { ...caller, allowedTools: ['everything__*'] })).toMatchObject({
      param: 'allowed_tools',
    });
    expect(wideningOf(limited, { ...caller, allowedTools: ['github__search_*', 'everything__echo'] })).toBeNull();
    expect(wideningOf(limited, { ...caller, allowedTools: [] })).toBeNull();
  });

  it('a caller with a cap mints only keys with a cap no higher', () => {
    const capped = { ...caller, dailyLimitCredits: 100, monthlyLimitCredits: 1000 };
    expect(wideningOf(capped, { ...caller, dailyLimitCredits: null, monthlyLimitCredits: 1000 })).toMatchObject({
      param: 'daily_limit_tokens',
    });
    expect(wideningOf(capped, { ...caller, dailyLimitCredits: 101, monthlyLimitCredits: 1000 })).toMatchObject({
      param: 'daily_limit_tokens',
    });
    expect(wideningOf(capped, { ...caller, dailyLimitCredits: 100, monthlyLimitCredits: 1001 })).toMatchObject({
      param: 'monthly_limit_tokens',
    });
    expect(wideningOf(capped, { ...caller, dailyLimitCredits: 0, monthlyLimitCredits: 1000 })).toBeNull();
  });

  it('a rate-limited caller mints only keys limited as tightly or more', () => {
    const limited = { ...caller, rpm: 60, tpm: 10_000 };
    expect(wideningOf(limited, { ...caller, rpm: null, tpm: 10_000 })).toMatchObject({ param: 'rpm' });
    expect(wideningOf(limited, { ...caller, rpm: 61, tpm: 10_000 })).toMatchObject({ param: 'rpm' });
    expect(wideningOf(limited, { ...caller, rpm: 60, tpm: null })).toMatchObject({ param: 'tpm' });
    expect(wideningOf(limited, { ...caller, rpm: 30, tpm: 5_000 })).toBeNull();
    // An unlimited caller gives any limit, or none.
    expect(wideningOf(caller, { ...caller, rpm: 5, tpm: null })).toBeNull();
  });

  it('a caller on byo or credits gives only its own route; auto gives any', () => {
    expect(wideningOf({ ...caller, route: 'byo' }, { ...caller, route: 'auto' })).toMatchObject({ param: 'route' });
    expect(wideningOf({ ...caller, route: 'credits' }, { ...caller, route: 'byo' })).toMatchObject({ param: 'route' });
    expect(wideningOf({ ...caller, route: 'credits' }, { ...caller, route: 'credits' })).toBeNull();
  });

  it('a team key gives keys of its own team only', () => {
    const team = { ...caller, orgId: 'org_a' };
    expect(wideningOf(team, { ...caller, orgId: null })).toMatchObject({ param: 'org_id' });
    expect(wideningOf(team, { ...caller, orgId: 'org_b' })).toMatchObject({ param: 'org_id' });
    expect(wideningOf(team, { ...caller, orgId: 'org_a' })).toBeNull();
  });
});

describe('glob coverage', () => {
  it.each([
    ['*', 'anything*', true],
    ['gpt-*', 'gpt-4*', true],
    ['gpt-*', 'gpt-4o', true],
    ['gpt-4*', 'gpt-*', false],
    ['my-vllm/*', 'my-vllm/llama-?', true],
    ['a?c', 'abc', true],
    ['a?c', 'a?c', true],
    // `?` is one character, `*` may be many: "a*c" reaches "abbc", which "a?c" does not.
    ['a?c', 'a*c', false],
    ['house', 'house-fast', false],
  ])('%s covers %s: %s', (outer, inner, expected) => {
    expect(globCovers(outer, inner)).toBe(expected);
  });

  it('every model covers any list, and no list covers every model', () => {
    expect(modelsCovered(null, null)).toBe(true);
    expect(modelsCovered(['*'], null)).toBe(false);
    expect(modelsCovered(['gpt-*'], ['gpt-4o'])).toBe(true);
  });
});
