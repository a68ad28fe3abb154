import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressPolicy, type EgressCaller } from '@sbc/egress';
import { createMcpProber } from './probe-mcp-server';

// Fakes of tool servers that are not what they claim: each answers every request the way one broken server does.
async function fakeServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}

const TIMEOUT_MS = 500;
const prober = createMcpProber({
  timeoutMs: TIMEOUT_MS,
  egress: createEgressPolicy({ privateEgress: 'operators' }),
});
const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

async function probeOf(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  dialAs: EgressCaller = 'operator',
) {
  const fake = await fakeServer(handler);
  servers.push(fake.server);
  return prober.probe({ url: fake.url, headers: {}, bearerToken: '', dialAs });
}

describe('probing a tool server that is not a working MCP server', () => {
  it("an HTTP refusal is reported by its status only, never the server's body", async () => {
    const report = await probeOf((_req, res) => {
      res.writeHead(403, { 'content-type': 'text/html' });
      res.end('<h1>forbidden: internal-detail-42</h1>');
    });
    expect(report.probe).toMatchObject({ ok: false, error: expect.stringContaining('answered HTTP 403') });
    expect(report.probe.error).not.toContain('internal-detail-42');
    expect(report.tools).toBeUndefined();
  });

  it('a 200 that is not JSON-RPC is a failed handshake, not a crash', async () => {
    const report = await probeOf((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"hello": "not mcp"}');
    });
    expect(report.probe.ok).toBe(false);
    expect(report.probe.error).toMatch(/127\.0\.0\.1:\d+/);
  });

  it('a server that never answers is a timeout within the bound', async () => {
    const started = Date.now();
    const report = await probeOf(() => undefined);
    expect(report.probe).toMatchObject({ ok: false, error: expect.stringMatching(/did not answer within 0\.5 s/) });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * 6);
  });

  it('a port fetch never dials is named as the reason', async () => {
    const report = await prober.probe({
      url: 'http://127.0.0.1:9/mcp',
      headers: {},
      bearerToken: '',
      dialAs: 'operator',
    });
    expect(report.probe).toMatchObject({ ok: false, error: '127.0.0.1:9: bad port' });
  });

  it("a tenant's probe never dials loopback (egress), whatever the URL says", async () => {
    let dialed = false;
    const report = await probeOf(() => (dialed = true), 'tenant');
    expect(report.probe).toMatchObject({ ok: false, error: expect.stringMatching(/loopback/) });
    expect(dialed).toBe(false);
  });
});
