import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callerDialect, DialectRequestError, type DialectIssue } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import { CallResponse } from './call-response';

const ISSUES: DialectIssue[] = [
  { path: 'model', code: 'required', message: 'is required' },
  { path: 'temperature', code: 'invalid_value', message: 'must be between 0 and 2' },
];

/** What a caller of `dialect` receives when the edge refuses its call with `error`. */
async function refusalOf(dialect: 'chat' | 'responses' | 'messages', error: ApiError) {
  const server = createServer((_req, res) => {
    new CallResponse(res, callerDialect(dialect), 'req_1', 'https://gw.example').refuse(error);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

describe("a call the dialect parsers refuse, in the caller's dialect", () => {
  it.each(['chat', 'responses', 'messages'] as const)(
    '%s: answered as ApiError.invalid of the same issues, with the first issue as its message',
    async (dialect) => {
      const refused = await refusalOf(dialect, new DialectRequestError(ISSUES));
      expect(refused).toEqual(await refusalOf(dialect, ApiError.invalid(ISSUES)));
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ message: 'is required', issues: ISSUES });
    },
  );

  it('chat callers read the first bad field as param', async () => {
    const refused = await refusalOf('chat', new DialectRequestError(ISSUES));
    expect(refused.body.error).toMatchObject({ param: 'model', type: 'invalid_request_error' });
  });
});
