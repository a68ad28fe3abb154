import { readFileSync } from 'node:fs';
import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import path from 'node:path';
import { ConfigError } from '@sbc/config';
import { Agent, request } from 'undici';
import { loadSimConfig } from './config';
import type { RunningSim } from './main';
import { startSim } from './test-support';

const FIXTURES = path.join(__dirname, '__fixtures__');
const CA = readFileSync(path.join(FIXTURES, 'localhost-cert.pem'));
const KEY = 'sim-tls-key';
const streamBody = JSON.stringify({
  model: 'sim-small',
  stream: true,
  messages: [{ role: 'user', content: 'Hello there, how are you today?' }],
});

let sim: RunningSim;
let session: ClientHttp2Session;
// undici without allowH2 offers only http/1.1 by ALPN, like Node's fetch and most SDKs.
const http1 = new Agent({ connect: { ca: CA } });

beforeAll(async () => {
  sim = await startSim({
    host: '127.0.0.1',
    apiKey: KEY,
    tls: { certFile: path.join(FIXTURES, 'localhost-cert.pem'), keyFile: path.join(FIXTURES, 'localhost-key.pem') },
  });
  session = connect(sim.url, { ca: CA });
});
afterAll(async () => {
  session.close();
  await http1.close();
  await sim.stop();
});

function h2Call(
  method: string,
  urlPath: string,
  body?: string,
  key = KEY,
): Promise<{ headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ':method': method,
      ':path': urlPath,
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
    });
    let headers: IncomingHttpHeaders = {};
    let text = '';
    stream.setEncoding('utf8');
    stream.on('response', (head) => (headers = head));
    stream.on('data', (chunk: string) => (text += chunk));
    stream.on('end', () => resolve({ headers, text }));
    stream.on('error', reject);
    stream.end(body);
  });
}

/** A reply's bytes with the parts that differ per call (id, clock) blanked. */
const comparable = (text: string) =>
  text.replace(/"id":"chatcmpl-[^"]+"/g, '"id":"ID"').replace(/"created":\d+/g, '"created":0');

describe('the TLS listener (SIM_TLS_CERT / SIM_TLS_KEY)', () => {
  it(
    'negotiates HTTP/2 by ALPN and streams Chat Completions ' + 'with the same bytes as HTTP/1.1 on the same port',
    async () => {
      expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const h2 = await h2Call('POST', '/v1/chat/completions', streamBody);
      expect(session.alpnProtocol).toBe('h2');
      expect(h2.headers).toMatchObject({
        ':status': 200,
        'content-type': 'text/event-stream; charset=utf-8',
        'x-sim-upstream': '1',
      });
      expect(h2.headers['x-request-id']).toMatch(/^req_/);

      const res = await request(`${sim.url}/v1/chat/completions`, {
        method: 'POST',
        dispatcher: http1,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: streamBody,
      });
      expect(res.statusCode).toBe(200);
      const h1Text = await res.body.text();
      expect(h1Text).toContain('data: [DONE]');
      expect(comparable(h2.text)).toBe(comparable(h1Text));
    },
  );

  it('answers a whole (non-streamed) completion over HTTP/2 as JSON', async () => {
    const { headers, text } = await h2Call(
      'POST',
      '/v1/chat/completions',
      JSON.stringify({ model: 'sim-small', messages: [{ role: 'user', content: 'Hi' }] }),
    );
    expect(headers[':status']).toBe(200);
    expect(headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(text)).toMatchObject({
      object: 'chat.completion',
      model: 'sim-small',
      choices: [{ message: { role: 'assistant', content: 'Simulated reply to: Hi' } }],
    });
  });

  it('refuses over HTTP/2 as over HTTP/1.1: a wrong key, a bad body, a route only HTTP/1.1 serves', async () => {
    const wrongKey = await h2Call('POST', '/v1/chat/completions', streamBody, 'not-the-key');
    expect(wrongKey.headers[':status']).toBe(401);
    expect(JSON.parse(wrongKey.text)).toMatchObject({
      error: { type: 'invalid_request_error', code: 'invalid_api_key' },
    });

    const notJson = await h2Call('POST', '/v1/chat/completions', '{"model":');
    expect(notJson.headers[':status']).toBe(400);
    expect(JSON.parse(notJson.text)).toMatchObject({
      error: { message: 'We could not parse the JSON body of your request.' },
    });

    const noModel = await h2Call('POST', '/v1/chat/completions', JSON.stringify({ messages: [] }));
    expect(noModel.headers[':status']).toBe(400);

    const models = await h2Call('GET', '/v1/models');
    expect(models.headers[':status']).toBe(404);
    expect(JSON.parse(models.text)).toMatchObject({ error: { code: 'unknown_url' } });
  });

  it('serves every route over HTTP/1.1 to clients that do not offer HTTP/2', async () => {
    const res = await request(`${sim.url}/v1/models`, {
      dispatcher: http1,
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ object: 'list' });
  });

  it('takes the certificate and key together or not at all', () => {
    expect(loadSimConfig({ SIM_TLS_CERT: 'cert.pem', SIM_TLS_KEY: 'key.pem' }).tls).toEqual({
      certFile: 'cert.pem',
      keyFile: 'key.pem',
    });
    expect(() => loadSimConfig({ SIM_TLS_CERT: 'cert.pem' })).toThrow(ConfigError);
  });
});
