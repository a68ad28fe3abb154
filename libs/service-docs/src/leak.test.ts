import { classifySegment, isSecretName } from './classify';
import { learnShippedDocuments, SERVICE_CATALOG } from './catalog';
import { learnDocument } from './document';
import { parseObservationSet, type ExchangeInput } from './observation';

// Every string below is a value a document must never contain.
const SECRETS = {
  bearer: 'eyJhbGciOiJIUzI1NiJ9.LEAKbearerPayload.LEAKsig01',
  apiKeyHeader: 'sk_live_LEAK4eC39HqLyjWDarjtT1zdp7dc',
  cookie: 'LEAKsessionCookie7781',
  basic: 'dXNlcjpMRUFLcGFzc3dvcmQ=',
  rawAuthorization: 'LEAKrawTokenNoScheme55',
  customHeader: 'LEAK-trace-0f9e8d7c6b',
  setCookie: 'LEAKsetCookie9912',
  queryKey: 'LEAKqueryKey3141',
  queryToken: 'LEAKqueryToken2718',
  queryText: 'LEAKsearchTerms',
  queryEmail: 'leak.query@victim.example',
  userInfo: 'LEAKuserinfoPass',
  pathEmail: 'leak.path@victim.example',
  pathUuid: '9b2f4c1a-7e3d-4a5b-8c6d-0e1f2a3b4c5d',
  pathId: 'usr_01HQ3K5Z8X9Y7W6V5T4S3R2Q1P',
  pathNumber: '987654321',
  webhookToken: 'LEAKwebhookTail8xQ2w',
  password: 'letmein',
  apiKeyBody: 'pk_live_LEAK51HqBodyKey',
  bodyEmail: 'leak.body@victim.example',
  clientSecret: 'LEAKclientSecretForm',
  sessionMode: 'live',
  mapKeyEmail: 'leak.mapkey@victim.example',
  mapKeyId: 'cus_LEAKmapKey8a7b',
  bodyId: 'acct_LEAK1Nv0FGQ9RKHgCVdK',
  bodyNumber: 424242424242,
} as const;

const base = { time: '2026-05-01T10:00:00Z', source: 'proxy' } as const;
const exchanges: ExchangeInput[] = [0, 1, 2].flatMap((n): ExchangeInput[] => [
  {
    ...base,
    method: 'GET',
    url:
      `https://admin:${SECRETS.userInfo}@api.leaky.example/v1/users/${SECRETS.pathId}/sessions/${SECRETS.pathUuid}` +
      `?api_key=${SECRETS.queryKey}&token=${SECRETS.queryToken}&q=${SECRETS.queryText}` +
      `&email=${encodeURIComponent(SECRETS.queryEmail)}&user_id=${SECRETS.pathNumber}`,
    status: 200,
    request: {
      headers: {
        Authorization: `Bearer ${SECRETS.bearer}`,
        'X-Api-Key': SECRETS.apiKeyHeader,
        Cookie: `session=${SECRETS.cookie}; theme=dark`,
        'x-trace': SECRETS.customHeader,
      },
    },
    response: {
      headers: {
        'content-type': 'application/json',
        'set-cookie': `session=${SECRETS.setCookie}; HttpOnly`,
        'x-ratelimit-remaining': '41',
      },
      body: {
        id: SECRETS.bodyId,
        owner_number: SECRETS.bodyNumber,
        email: SECRETS.bodyEmail,
        password: SECRETS.password,
        api_key: SECRETS.apiKeyBody,
        session: { mode: SECRETS.sessionMode, token: SECRETS.bearer },
        usage: { [SECRETS.mapKeyEmail]: { calls: n }, [SECRETS.mapKeyId]: { calls: 1 } },
        contacts: [{ email: SECRETS.bodyEmail, role: 'admin' }],
      },
    },
  },
  {
    ...base,
    method: 'POST',
    url: `https://api.leaky.example/v1/accounts/${encodeURIComponent(SECRETS.pathEmail)}/numbers/${SECRETS.pathNumber}`,
    status: 201,
    request: {
      headers: { authorization: `Basic ${SECRETS.basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body:
        `client_secret=${SECRETS.clientSecret}&password=${SECRETS.password}&grant_type=password` +
        `&email=${encodeURIComponent(SECRETS.bodyEmail)}`,
    },
    response: { headers: { 'content-type': 'application/json' }, body: { ok: true } },
  },
  {
    ...base,
    method: 'POST',
    url: `https://hooks.leaky.example/hooks/T0001ABCD/B0002EFGH/${SECRETS.webhookToken}`,
    status: 200,
    request: {
      headers: { authorization: SECRETS.rawAuthorization, 'content-type': 'application/json' },
      body: { text: 'deploy finished' },
    },
    response: { headers: { 'content-type': 'text/plain' }, body: 'ok' },
  },
]);

const seeded = learnDocument(parseObservationSet({ service: { id: 'leaky', title: 'Leaky API' }, exchanges }));

describe('no observed value reaches a document', () => {
  it.each(Object.entries(SECRETS))('the seeded %s does not appear anywhere in the document', (_name, value) => {
    const text = JSON.stringify(seeded);
    expect(text).not.toContain(String(value));
    expect(text).not.toContain(encodeURIComponent(String(value)));
  });

  it('the seeded set still yields a useful document: templates, schemes and field names, no values', () => {
    expect(Object.keys(seeded.paths)).toEqual([
      '/hooks/{hook}/{hook2}/{hook3}',
      '/v1/accounts/{account}/numbers/{number}',
      '/v1/users/{user}/sessions/{session}',
    ]);
    expect(Object.keys(seeded.components.securitySchemes)).toEqual([
      'apiKey.cookie.session',
      'apiKey.header.authorization',
      'apiKey.header.x-api-key',
      'apiKey.query.api_key',
      'apiKey.query.token',
      'basic',
      'bearer',
    ]);
    const query = (seeded.paths['/v1/users/{user}/sessions/{session}']!.get as any).parameters
      .filter((p: any) => p.in === 'query')
      .map((p: any) => p.name);
    expect(query).toEqual(['q', 'email', 'user_id']);
    expect(seeded['x-house-replay'].servers).toEqual(['https://api.leaky.example', 'https://hooks.leaky.example']);
  });
});

/**
 * Values in the shipped observations that must not be printed: credentials, ids, emails, tokens, header and query
 * values.
 */
function sensitiveValues(): string[] {
  const found = new Set<string>();
  const add = (value: string) => {
    if (value.length >= 8 && !/^[a-z]+\/[a-z0-9.+-]+/.test(value)) found.add(value);
  };
  const visit = (node: unknown, key = '') => {
    if (typeof node === 'string') {
      const kind = classifySegment(node, 1);
      if (isSecretName(key) || kind === 'email' || kind === 'uuid' || kind === 'id') add(node);
    } else if (node && typeof node === 'object')
      for (const [k, v] of Object.entries(node)) visit(v, Array.isArray(node) ? key : k);
  };
  for (const set of SERVICE_CATALOG.values()) {
    for (const exchange of set.exchanges) {
      const url = new URL(exchange.url);
      for (const value of url.searchParams.values()) add(value);
      for (const raw of url.pathname.split('/')) {
        const segment = decodeURIComponent(raw);
        const kind = classifySegment(segment, 1);
        // A date also starts the provenance timestamps, so it is looked for as a path segment or a whole value.
        if (kind === 'date') found.add(`/${segment}`).add(JSON.stringify(segment));
        else if (kind !== 'slug' && kind !== 'version') add(segment);
      }
      for (const headers of [exchange.request.headers, exchange.response.headers])
        for (const value of Object.values(headers).flat()) add(value);
      visit(exchange.request.body);
      visit(exchange.response.body);
      if (typeof exchange.request.body === 'string')
        visit(Object.fromEntries(new URLSearchParams(exchange.request.body)));
    }
  }
  return [...found];
}

describe('shipped documents', () => {
  const documents = learnShippedDocuments();

  it('contain none of their observations’ credentials, ids, emails, tokens, header values or query values', () => {
    const values = sensitiveValues();
    expect(values.length).toBeGreaterThan(50);
    for (const [id, document] of documents) {
      const text = JSON.stringify(document);
      expect({ id, leaked: values.filter((value) => text.includes(value)) }).toEqual({ id, leaked: [] });
    }
  });
});
