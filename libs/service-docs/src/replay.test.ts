import {
  authRuleNames,
  emptySignals,
  isDocumentedRequestHeader,
  isIdempotent,
  observeSignals,
  paginationOf,
  type ReplaySignals,
} from './replay';

type Seen = { request?: Record<string, string>; response?: Record<string, string>; query?: string[]; body?: unknown };

function signalsOf(...exchanges: Seen[]): ReplaySignals {
  const signals = emptySignals();
  for (const e of exchanges) {
    observeSignals(signals, {
      requestHeaders: new Map(Object.entries(e.request ?? {}).map(([k, v]) => [k, [v]])),
      responseHeaders: new Map(Object.entries(e.response ?? {}).map(([k, v]) => [k, [v]])),
      queryNames: e.query ?? [],
      responseBody: e.body,
    });
  }
  return signals;
}

describe('auth rules', () => {
  it('names the scheme of Authorization, never its credential', () => {
    const signals = signalsOf(
      { request: { authorization: 'Bearer octo_pat_secret' } },
      { request: { authorization: 'Basic dXNlcjpwYXNz' } },
      {},
    );
    expect(authRuleNames(signals)).toEqual(['basic', 'bearer', 'none']);
    expect([...signals.schemes]).toEqual([
      ['bearer', { type: 'http', scheme: 'bearer' }],
      ['basic', { type: 'http', scheme: 'basic' }],
    ]);
  });

  it(
    'an Authorization value without a known scheme word is an API key in that header (the value is not read as a ' +
      'scheme)',
    () => {
      const signals = signalsOf(
        { request: { authorization: 'sk_live_51Hq2nWbXe7Rt0Yk' } },
        { request: { authorization: 'Token abc123' } },
      );
      expect(authRuleNames(signals)).toEqual(['apiKey.header.authorization']);
    },
  );

  it('API keys in headers, the query and session cookies are named by where they travel', () => {
    const signals = signalsOf({
      request: { 'x-api-key': 'ppk_live_x', cookie: 'sessionid=abc; theme=dark' },
      query: ['api_key'],
    });
    expect(authRuleNames(signals)).toEqual([
      'apiKey.cookie.sessionid',
      'apiKey.header.x-api-key',
      'apiKey.query.api_key',
    ]);
    expect(signals.schemes.get('apiKey.query.api_key')).toEqual({ type: 'apiKey', in: 'query', name: 'api_key' });
  });

  it('an idempotency key is not a credential', () => {
    expect(authRuleNames(signalsOf({ request: { 'idempotency-key': 'k' } }))).toEqual(['none']);
    expect(isDocumentedRequestHeader('idempotency-key')).toBe(true);
    expect(
      ['authorization', 'x-api-key', 'x-auth-token', 'cookie', 'user-agent', 'sec-fetch-mode'].some(
        isDocumentedRequestHeader,
      ),
    ).toBe(false);
    expect(isDocumentedRequestHeader('x-octo-api-version')).toBe(true);
  });
});

describe('idempotency', () => {
  it('GET, PUT and DELETE are idempotent; POST and PATCH only when an idempotency key was sent', () => {
    const none = signalsOf({});
    expect(['get', 'put', 'delete', 'head'].every((m) => isIdempotent(m, none))).toBe(true);
    expect(isIdempotent('post', none)).toBe(false);
    expect(isIdempotent('patch', none)).toBe(false);
    const keyed = signalsOf({}, { request: { 'idempotency-key': '6f1d2c3b' } });
    expect(isIdempotent('post', keyed)).toBe(true);
    expect(keyed.idempotencyHeader).toBe('idempotency-key');
  });
});

describe('pagination styles', () => {
  it('a Link header wins, with the page parameters that drive it', () => {
    expect(
      paginationOf(signalsOf({ response: { link: '<…>; rel="next"' }, query: ['state', 'per_page', 'page'] })),
    ).toEqual({ style: 'link-header', header: 'link', query: ['page', 'per_page'] });
  });

  it('cursor fields in the body or cursor parameters in the query', () => {
    expect(
      paginationOf(
        signalsOf(
          { query: ['limit'], body: { object: 'list', data: [], has_more: true } },
          { query: ['limit', 'starting_after'] },
        ),
      ),
    ).toEqual({
      style: 'cursor',
      query: ['limit', 'starting_after'],
      fields: ['has_more'],
    });
    expect(paginationOf(signalsOf({ body: [{ has_more: true }] }))).toBeUndefined();
  });

  it('page + per_page, then offset + limit', () => {
    expect(paginationOf(signalsOf({ query: ['page', 'per_page'] }))).toEqual({
      style: 'page',
      query: ['page', 'per_page'],
    });
    expect(paginationOf(signalsOf({ query: ['offset', 'limit'] }))).toEqual({
      style: 'offset',
      query: ['limit', 'offset'],
    });
    expect(paginationOf(signalsOf({ query: ['q'] }))).toBeUndefined();
  });

  it('rate-limit headers are collected by name', () => {
    const signals = signalsOf({
      response: { 'x-ratelimit-remaining': '1', 'ratelimit-reset': '3', 'retry-after': '1', 'x-request-id': 'r' },
    });
    expect([...signals.rateLimitHeaders].sort()).toEqual(['ratelimit-reset', 'retry-after', 'x-ratelimit-remaining']);
  });
});
