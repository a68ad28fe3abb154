import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { createEgressPolicy, privateEgressOf, type Resolver } from './policy';

/** A resolver that knows a few made-up names, the way a test DNS would answer them. */
function fakeResolver(table: Record<string, string[]>): Resolver {
  return async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const names = fakeResolver({
  localhost: ['127.0.0.1', '::1'],
  'public.test': ['8.8.8.8'],
  'inward.test': ['8.8.8.8', '10.0.0.7'],
  'gw.test': ['8.8.4.4'],
});

const INWARD = [
  'http://127.0.0.1:8090/v1',
  'http://localhost:11434',
  'http://api.localhost',
  'http://[::1]:8090',
  'http://10.0.0.8/v1',
  'http://192.168.1.10',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://017700000001/',
  'http://inward.test/v1',
];
const NEVER = [
  'http://169.254.169.254/latest/meta-data',
  'http://[fe80::1]/',
  'http://0.0.0.0:8080',
  'http://192.0.2.10/',
  'http://198.51.100.1/',
  'http://203.0.113.1/',
  'http://[2001:db8::1]/',
  'http://224.0.0.1/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::127.0.0.1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b:1::a00:1]/',
  'http://[2002:7f00:1::1]/',
];

describe('egress policy at write time', () => {
  const operatorsOnly = createEgressPolicy({ privateEgress: 'operators', resolve: names });

  it.each(INWARD)('a tenant may not aim at %s; an operator may', async (url) => {
    await expect(operatorsOnly.refusal(url, 'tenant')).resolves.toMatch(
      /loopback or private address, which this service dials only for its operators/,
    );
    await expect(operatorsOnly.refusal(url, 'operator')).resolves.toBeUndefined();
  });

  it.each(NEVER)('no one may aim at %s', async (url) => {
    const everyone = createEgressPolicy({ privateEgress: 'everyone', resolve: names });
    await expect(everyone.refusal(url, 'operator')).resolves.toMatch(/which this service never dials/);
    await expect(operatorsOnly.refusal(url, 'tenant')).resolves.toMatch(/which this service never dials/);
  });

  it('EGRESS_PRIVATE=none refuses loopback for operators too; everyone allows it for tenants', async () => {
    await expect(
      createEgressPolicy({ privateEgress: 'none', resolve: names }).refusal('http://localhost:11434', 'operator'),
    ).resolves.toMatch(/does not dial/);
    await expect(
      createEgressPolicy({ privateEgress: 'everyone', resolve: names }).refusal('http://localhost:11434', 'tenant'),
    ).resolves.toBeUndefined();
  });

  it('public addresses and names pass; a name that does not resolve is left to the dial', async () => {
    for (const url of [
      'https://8.8.8.8/v1',
      'https://public.test/v1',
      'https://[2606:4700::1111]/',
      'https://nowhere.test',
    ]) {
      await expect(operatorsOnly.refusal(url, 'tenant')).resolves.toBeUndefined();
    }
  });

  it("the gateway's own origin is refused for everyone, by name, by address and on a wildcard listener", async () => {
    const policy = createEgressPolicy({
      privateEgress: 'everyone',
      resolve: names,
      ownOrigins: () => ['https://gw.test', 'http://0.0.0.0:8080'],
    });
    await expect(policy.refusal('https://gw.test/v1', 'operator')).resolves.toMatch(/own address/);
    await expect(policy.refusal('https://8.8.4.4/v1', 'operator')).resolves.toMatch(/own address/);
    await expect(policy.refusal('http://127.0.0.1:8080/v1', 'operator')).resolves.toMatch(/own address/);
    await expect(policy.refusal('http://localhost:8080/v1', 'operator')).resolves.toMatch(/own address/);
    await expect(policy.refusal('http://127.0.0.1:8081/v1', 'operator')).resolves.toBeUndefined();
  });

  it('reads the deprecated EGRESS_DENY_PRIVATE as "none" only when it was true', () => {
    expect(privateEgressOf(undefined, false)).toBe('operators');
    expect(privateEgressOf(undefined, true)).toBe('none');
    expect(privateEgressOf('everyone', true)).toBe('everyone');
  });
});

describe('egress policy at dial time', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  async function dial(
    policy: ReturnType<typeof createEgressPolicy>,
    caller: 'operator' | 'tenant',
    host: string,
  ): Promise<string> {
    const agent = new Agent({ connect: policy.connector(caller, { timeout: 2_000 }) });
    try {
      const reply = await agent.request({ origin: `http://${host}:${port}`, path: '/', method: 'GET' });
      return await reply.body.text();
    } catch (error) {
      return `refused: ${(error as { code?: string }).code}: ${(error as Error).message}`;
    } finally {
      await agent.close();
    }
  }

  it('a name that passed at write time and then resolves inward is refused when dialed (DNS rebinding)', async () => {
    let answer = '8.8.8.8';
    const policy = createEgressPolicy({
      privateEgress: 'operators',
      resolve: async () => [{ address: answer, family: 4 }],
    });
    await expect(policy.refusal(`http://rebind.test:${port}`, 'tenant')).resolves.toBeUndefined();
    answer = '127.0.0.1';
    expect(await dial(policy, 'tenant', 'rebind.test')).toMatch(
      /^refused: EGRESS_DENIED: rebind\.test is a loopback or private address/,
    );
    expect(await dial(policy, 'operator', 'rebind.test')).toBe('ok');
  });

  it('IP literals skip the lookup and are checked before connecting', async () => {
    const policy = createEgressPolicy({ privateEgress: 'operators' });
    expect(await dial(policy, 'tenant', '127.0.0.1')).toMatch(/^refused: EGRESS_DENIED/);
    expect(await dial(policy, 'tenant', '[::ffff:127.0.0.1]')).toMatch(/^refused: EGRESS_DENIED: .*ipv4Mapped/);
    expect(await dial(policy, 'operator', '127.0.0.1')).toBe('ok');
  });

  it("the connected peer is compared with the gateway's own listener", async () => {
    const policy = createEgressPolicy({ privateEgress: 'everyone', ownOrigins: () => [`http://127.0.0.1:${port}`] });
    expect(await dial(policy, 'operator', 'localhost')).toMatch(
      /^refused: EGRESS_DENIED: localhost is this gateway's own address/,
    );
  });
});
