import { REDACTED, redactExchange, redactUrl } from './redact';

const SECRETS = [
  'sk_live_LEAK4eC39HqLyjWDarjtT1zd',
  'LEAKpassword77',
  'eyJhbGciOiJIUzI1NiJ9.LEAKpayload.LEAKsig',
  'LEAKcookie55',
  'LEAKqueryToken',
  'LEAKuserinfo',
  'ghp_LEAKghTokenValue1234',
];

describe('exchange redaction (nothing that could be a credential is stored)', () => {
  const exchange = redactExchange({
    method: 'post',
    url: 'https://bob:LEAKuserinfo@api.example.test/v1/items?access_token=LEAKqueryToken&page=2',
    status: 201,
    time: '2026-05-01T10:00:00.000Z',
    request: {
      headers: {
        Authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.LEAKpayload.LEAKsig',
        'Content-Type': 'application/json',
        'X-Trace': 'sk_live_LEAK4eC39HqLyjWDarjtT1zd',
      },
      body: JSON.stringify({
        name: 'widget',
        password: 'LEAKpassword77',
        nested: { api_key: 'x', note: 'use ghp_LEAKghTokenValue1234 here', count: 3 },
      }),
    },
    response: {
      headers: { 'set-cookie': ['sid=LEAKcookie55; HttpOnly'], 'content-type': 'application/json' },
      body: '{"id":"itm_1","ok":true,"next":"/v1/items?page=3&access_token=LEAKqueryToken"}',
    },
  });
  const stored = JSON.stringify(exchange);

  it(
    'leaves no secret anywhere: header, query, user info, JSON ' +
      'field, or a secret-shaped value under an innocent name',
    () => {
      for (const secret of SECRETS)
        expect({ secret, leaked: stored.includes(secret) }).toEqual({ secret, leaked: false });
    },
  );

  it('keeps names, shapes and harmless values for the learner', () => {
    expect(exchange).toMatchObject({
      method: 'POST',
      status: 201,
      request: {
        headers: { authorization: REDACTED, 'content-type': 'application/json' },
        body: { name: 'widget', password: REDACTED, nested: { api_key: REDACTED, count: 3 } },
      },
      response: {
        headers: { 'set-cookie': [REDACTED] },
        body: { id: 'itm_1', ok: true, next: `/v1/items?page=3&access_token=${REDACTED}` },
      },
    });
    expect(new URL(exchange.url).searchParams.get('page')).toBe('2');
    expect(new URL(exchange.url).username).toBe('');
  });

  it('redacts form fields by name and leaves text bodies readable', () => {
    const form = redactExchange({
      method: 'POST',
      url: 'https://auth.example.test/token',
      status: 200,
      time: '2026-05-01T10:00:00.000Z',
      request: {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&client_secret=LEAKform',
      },
      response: { headers: { 'content-type': 'text/plain' }, body: 'hello Token LEAKtext' },
    });
    expect(form.request.body).toBe(`grant_type=client_credentials&client_secret=${encodeURIComponent(REDACTED)}`);
    expect(form.response.body).toBe(`hello ${REDACTED}`);
    expect(redactUrl('https://x.test/a?q=cats')).toBe('https://x.test/a?q=cats');
  });
});
