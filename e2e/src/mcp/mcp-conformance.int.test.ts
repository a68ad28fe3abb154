import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { startEverythingServer, EVERYTHING_SERVER, type RunningMcpServer } from '../support/mcp-everything';
import { registryPackage } from '../support/registry-packages';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

/**
 * The MCP project's conformance suite (`@modelcontextprotocol/conformance`, its server scenarios) against
 * `/mcp/{slug}` in front of the everything server, beside the same suite against the everything server alone: every
 * scenario the server passes alone passes through the gateway. The suite's client sends no credential, so a small
 * proxy on loopback adds the caller key, as a client configured with a header would. (0.1.12 is the newest release
 * that runs on Node 20: later ones import `fs.globSync`.)
 */
const CONFORMANCE = registryPackage('@modelcontextprotocol/conformance', '0.1.12');
const unavailable = CONFORMANCE.unavailable ?? EVERYTHING_SERVER.unavailable;
const run = promisify(execFile);
const SUITE_TIMEOUT_MS = 240_000;

let stack: AccountSurfaceStack;
let everything: RunningMcpServer | undefined;
let proxy: http.Server | undefined;
let proxyUrl = '';

/** Forwards every request to the edge with the caller key added; streams both ways. */
function startKeyProxy(edgeUrl: string, key: string): Promise<string> {
  const target = new URL(edgeUrl);
  proxy = http.createServer((req, res) => {
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    for (const [name, value] of Object.entries(req.headers))
      if (name !== 'host' && value !== undefined) upstream.setHeader(name, value);
    upstream.setHeader('authorization', `Bearer ${key}`);
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) =>
    proxy!.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(proxy!.address() as AddressInfo).port}`)),
  );
}

/** The scenarios the suite passed (`✓ <scenario>: N passed, 0 failed` in its summary), and its whole output. */
async function passedScenarios(url: string): Promise<{ passed: string[]; output: string }> {
  const installed = await CONFORMANCE.install();
  const { stdout, stderr } = await run(process.execPath, [installed.bin('conformance'), 'server', '--url', url], {
    timeout: SUITE_TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string }) => ({
    stdout: error.stdout ?? '',
    stderr: error.stderr ?? '',
  }));
  const output = stdout + stderr;
  const passed = [...output.matchAll(/^✓ (\S+): \d+ passed, 0 failed$/gm)].map((match) => match[1]!);
  return { passed, output };
}

const describeIt = unavailable ? describe.skip : describe;
if (unavailable) console.warn(`MCP conformance: skipped, ${unavailable}`);

describeIt('the MCP conformance suite through /mcp/{slug}', () => {
  beforeAll(async () => {
    everything = await startEverythingServer();
    stack = await startStack({ label: 'mcp_conformance', edgeEnv: { RATE_LIMIT_PER_MINUTE: '100000' } });
    const added = await stack.api('POST', '/v1/mcp/servers', {
      key: OWNER_KEY,
      body: { label: 'everything', url: everything.url },
    });
    expect(added.status).toBe(201);
    proxyUrl = await startKeyProxy(stack.edge.url, OWNER_KEY);
  }, 120_000);

  afterAll(async () => {
    proxy?.close();
    await stack?.stop();
    await everything?.stop();
  });

  it(
    'passes every scenario the everything server passes alone',
    async () => {
      const alone = await passedScenarios(everything!.url);
      expect(alone.passed).toContain('tools-list');
      const through = await passedScenarios(`${proxyUrl}/mcp/everything`);
      const missing = alone.passed.filter((scenario) => !through.passed.includes(scenario));
      expect({ missing, output: missing.length > 0 ? through.output.slice(-4000) : '' }).toEqual({
        missing: [],
        output: '',
      });
    },
    2 * SUITE_TIMEOUT_MS,
  );
});
