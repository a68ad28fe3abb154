import { Writable } from 'node:stream';
import { createLogger } from './index';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, destination };
}

describe('logging', () => {
  it('writes JSON lines carrying the service name', () => {
    const { lines, destination } = capture();
    createLogger({ service: 'gateway', destination }).info({ requestId: 'req_1' }, 'hello');
    expect(JSON.parse(lines[0]!)).toMatchObject({ service: 'gateway', requestId: 'req_1', msg: 'hello', level: 30 });
  });

  it('never writes a credential, secret or password, at the top level or one level down', () => {
    const { lines, destination } = capture();
    const secret = 'sbc_never_log_me_0123456789abcdef';
    createLogger({ service: 'account', destination }).info(
      {
        authorization: `Bearer ${secret}`,
        headers: { authorization: `Bearer ${secret}`, 'x-api-key': secret },
        key: secret,
        body: { password: secret, api_key: secret, token: secret },
      },
      'request',
    );
    expect(lines.join('')).not.toContain(secret);
    expect(lines.join('')).toContain('[redacted]');
  });
});
