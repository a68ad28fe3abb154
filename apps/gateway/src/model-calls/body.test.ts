import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { ApiError } from '@sbc/errors';
import { readJsonBody } from './body';

/** A request body as the edge sees it: a stream with headers. */
function requestOf(headers: Record<string, string> = {}): PassThrough & IncomingMessage {
  return Object.assign(new PassThrough(), { headers }) as unknown as PassThrough & IncomingMessage;
}

async function refusalOf(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error;
}

describe('readJsonBody', () => {
  it('refuses a declared length over the limit before reading a byte', async () => {
    const req = requestOf({ 'content-length': String(31 * 1024 * 1024) });
    const reading = jest.fn();
    req.on('data', reading);
    req.pause();
    expect((await refusalOf(readJsonBody(req, 1024))).code).toBe('request_too_large');
    expect(reading).not.toHaveBeenCalled();
    expect(req.readableFlowing).toBe(false);
  });

  it('refuses a body without a length as soon as it passes the limit, and reads no further', async () => {
    const req = requestOf();
    const refused = refusalOf(readJsonBody(req, 10));
    req.write('[0,0,0,0,');
    req.write('0,0,0,0]');
    expect((await refused).code).toBe('request_too_large');
    expect(req.listenerCount('data')).toBe(0);
  });

  it('reads a body within the limit and reports its size', async () => {
    const req = requestOf({ 'content-length': '13' });
    const reading = readJsonBody(req, 1024);
    req.end('{"model":"m"}');
    expect(await reading).toEqual({ value: { model: 'm' }, bytes: 13 });
  });

  it('marks a body whose text has an escape that may spell a NUL or a lone surrogate', async () => {
    const read = async (text: string) => {
      const req = requestOf();
      const reading = readJsonBody(req, 1024);
      req.end(text);
      return (await reading).unsafeEscapes;
    };
    expect(await read('{"model":"m\\u0000"}')).toBe(true);
    expect(await read('{"model":"m\\uD800"}')).toBe(true);
    expect(await read('{"model":"m\\u00e9 é"}')).toBeUndefined();
  });

  it(
    'leaves no listener on the request once the body is ' + 'read: a streamed reply does not keep the body with it',
    async () => {
      const req = requestOf({ 'content-length': '13' });
      const reading = readJsonBody(req, 1024);
      req.end('{"model":"m"}');
      await reading;
      for (const event of ['data', 'end', 'error', 'close']) expect(req.listenerCount(event)).toBe(0);
    },
  );

  it('an empty body is absent where the body is optional, and a refusal where one is required', async () => {
    const optional = requestOf();
    const reading = readJsonBody(optional, 1024, { optional: true });
    optional.end('');
    expect(await reading).toEqual({ value: undefined, bytes: 0 });
    const required = requestOf();
    const refused = refusalOf(readJsonBody(required, 1024));
    required.end('  ');
    expect(await refused).toMatchObject({ code: 'invalid_request', param: 'body' });
  });

  it('a body that is not JSON is 400 naming the body', async () => {
    const req = requestOf();
    const refused = refusalOf(readJsonBody(req, 1024));
    req.end('{"oops"');
    expect(await refused).toMatchObject({ code: 'invalid_request', param: 'body' });
  });

  it('a caller hanging up mid-body is client_closed_request (499), not a failure of ours', async () => {
    const req = requestOf({ 'content-length': '100' });
    const refused = refusalOf(readJsonBody(req, 1024));
    req.write('{"model":');
    req.destroy(new Error('aborted'));
    const error = await refused;
    expect(error.code).toBe('client_closed_request');
    expect(error.status).toBe(499);
  });
});
