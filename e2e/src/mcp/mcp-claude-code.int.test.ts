import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { agentSetup } from '@sbc/agent-setup';
import { baseEnv, makeSandbox, runCli, type Sandbox } from '../agents/run-cli';
import { startRefusingProxy } from '../agents/recording-proxy';
import { EVERYTHING_SERVER, startEverythingServer, type RunningMcpServer } from '../support/mcp-everything';
import { registryPackage, type InstalledPackage } from '../support/registry-packages';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

/**
 * Claude Code (the pinned CLI the coding-agents suite runs) pointed at `/mcp` exactly as docs/mcp.md says
 * (`claude mcp add --transport http … --header "Authorization: Bearer …"`), in front of a real everything server:
 * `claude mcp list` connects, and a headless run calls a tool through the gateway (the simulator's
 * `sim:call:<tool>` directive makes the model call it) and answers with what the tool returned.
 */
const CLAUDE_CODE = registryPackage('@anthropic-ai/claude-code', '2.1.332');
const unavailable = CLAUDE_CODE.unavailable ?? EVERYTHING_SERVER.unavailable;
const RUN_TIMEOUT_MS = 180_000;

let stack: AccountSurfaceStack;
let everything: RunningMcpServer | undefined;
let claude: InstalledPackage;
let sandbox: Sandbox;
let refusing: Awaited<ReturnType<typeof startRefusingProxy>>;
let env: Record<string, string>;

const describeIt = unavailable ? describe.skip : describe;
if (unavailable) console.warn(`MCP gateway with Claude Code: skipped, ${unavailable}`);

describeIt(`Claude Code ${CLAUDE_CODE.version} through the MCP gateway`, () => {
  beforeAll(async () => {
    claude = await CLAUDE_CODE.install();
    everything = await startEverythingServer();
    stack = await startStack({ label: 'mcp_claude_code' });
    const added = await stack.api('POST', '/v1/mcp/servers', {
      key: OWNER_KEY,
      body: { label: 'everything', url: everything.url },
    });
    expect(added.status).toBe(201);
    sandbox = await makeSandbox('claude-mcp');
    refusing = await startRefusingProxy();
    const setup = agentSetup('claude-code', { baseUrl: stack.edge.url, apiKey: OWNER_KEY, model: 'house' });
    env = {
      ...baseEnv(sandbox, refusing.url),
      ...Object.fromEntries(setup.env),
      CLAUDE_CONFIG_DIR: path.join(sandbox.home, '.claude'),
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      // MCP tools declared with the request, as a model without tool search needs them (the simulator calls a
      // declared tool by name), not deferred behind a search tool.
      ENABLE_TOOL_SEARCH: 'false',
    };
    // The command docs/mcp.md gives.
    const add = await runCli(
      claude.bin('claude'),
      [
        'mcp',
        'add',
        '--scope',
        'user',
        '--transport',
        'http',
        'sbc',
        `${stack.edge.url}/mcp`,
        '--header',
        `Authorization: Bearer ${OWNER_KEY}`,
      ],
      { cwd: sandbox.work, env, timeoutMs: RUN_TIMEOUT_MS },
    );
    expect(add).toMatchObject({ exitCode: 0 });
  }, 8 * 60_000);

  afterAll(async () => {
    await sandbox?.remove();
    await refusing?.close();
    await stack?.stop();
    await everything?.stop();
  });

  it('lists the gateway as a connected MCP server', async () => {
    const listed = await runCli(claude.bin('claude'), ['mcp', 'list'], {
      cwd: sandbox.work,
      env,
      timeoutMs: RUN_TIMEOUT_MS,
    });
    expect(listed.stdout).toMatch(/sbc: .*\/mcp \(HTTP\) - . Connected/);
  });

  it(
    'calls a tool through /mcp and answers with its result',
    async () => {
      const word = `sbcword${randomBytes(5).toString('hex')}`;
      const tool = 'mcp__sbc__everything__echo';
      const outcome = await runCli(
        claude.bin('claude'),
        [
          '-p',
          `sim:call:${tool} ${JSON.stringify({ message: word })}`,
          '--output-format',
          'json',
          '--allowedTools',
          tool,
        ],
        { cwd: sandbox.work, env, timeoutMs: RUN_TIMEOUT_MS },
      );
      // What it printed is in the failure's message.
      expect({
        exitCode: outcome.exitCode,
        timedOut: outcome.timedOut,
        output: outcome.stdout + outcome.stderr,
      }).toEqual({
        exitCode: 0,
        timedOut: false,
        output: expect.stringContaining('Simulated reply using the tool result:'),
      });
      const reply = (JSON.parse(outcome.stdout) as { result: string }).result;
      expect(reply).toContain('Simulated reply using the tool result:');
      expect(reply).toContain(word);
      expect(refusing.attempts).toEqual([]);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
