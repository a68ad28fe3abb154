import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import type { InstalledPackage } from '../support/registry-packages';
import { OWNER_KEY, simHouse, startStack, type AccountSurfaceStack } from '../support/stack';
import { CODING_AGENTS, ROUTE_OF, type AgentDialect, type CodingAgent } from './coding-agents.clis';
import { startRecordingProxy, startRefusingProxy, type RecordedExchange } from './recording-proxy';
import { baseEnv, makeSandbox, runCli, type CliOutcome } from './run-cli';

/**
 * The real coding-agent CLIs, installed from the npm registry at pinned versions (the latest ones with
 * SBC_AGENTS_LATEST=1, `npm run agents:latest`), each run headless against the gateway with a prompt that makes
 * one tool loop: the model calls a tool that reads a file holding a word made for this run, and answers with
 * what the tool returned. Every CLI runs on three model paths: `house` (an OpenAI-dialect engine), `house-omni`
 * (an Anthropic-dialect engine) and a model of a custom endpoint added through POST /v1/upstreams (a simulator
 * that speaks only the dialect of the provider this CLI's users bring, and refuses what that provider refuses).
 *
 * A run passes when the CLI exits 0, its answer carries the word (so the loop really ran), every request it sent
 * through the recording proxy got a 2xx (HEAD /, count_tokens and the model calls alike), it called its own
 * dialect's route, and it tried to reach nothing beyond the gateway.
 */

/** A run's bound: generous for a 2-core machine shared with other suites; a CLI alone takes 5–20 s. */
const RUN_TIMEOUT_MS = 180_000;
const INSTALL_TIMEOUT_MS = 6 * 60_000;
const ENDPOINT_SLUG = { openai: 'agents-openai', anthropic: 'agents-anthropic' } as const;

interface ModelPath {
  name: string;
  model(agent: CodingAgent): string;
  /** What happens between the CLI's dialect and the target's. */
  how(agent: CodingAgent): string;
}

/** Messages goes through to an Anthropic-dialect target as sent, chat completions to an OpenAI-dialect one. */
const PASSES_THROUGH_TO: Record<AgentDialect, 'openai' | 'anthropic' | undefined> = {
  messages: 'anthropic',
  chat: 'openai',
  responses: undefined,
};
const passthroughOrTranslated = (dialect: AgentDialect, target: 'openai' | 'anthropic') =>
  PASSES_THROUGH_TO[dialect] === target ? 'passthrough' : 'translated';

const MODEL_PATHS: ModelPath[] = [
  {
    name: 'house',
    model: () => 'house',
    how: (agent) => `${passthroughOrTranslated(agent.dialect, 'openai')} to an OpenAI-dialect engine`,
  },
  {
    name: 'house-omni',
    model: () => 'house-omni',
    how: (agent) => `${passthroughOrTranslated(agent.dialect, 'anthropic')} to an Anthropic-dialect engine`,
  },
  {
    name: 'custom endpoint',
    model: (agent) => `${ENDPOINT_SLUG[agent.endpointDialect]}/sim-large`,
    how: (agent) =>
      `${passthroughOrTranslated(agent.dialect, agent.endpointDialect)} to the caller's ${
        agent.endpointDialect === 'openai' ? 'OpenAI' : 'Anthropic'
      }-dialect endpoint`,
  },
];

const oneDialectSim = (dialect: 'openai' | 'anthropic') =>
  startSim(loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }), {
    dialects: [dialect],
  });

const runnable = CODING_AGENTS.filter((agent) => !agent.pkg.unavailable);
for (const agent of CODING_AGENTS)
  if (agent.pkg.unavailable) console.warn(`coding agents: ${agent.title} is skipped: ${agent.pkg.unavailable}`);

let stack: AccountSurfaceStack;
const sims: RunningSim[] = [];
if (runnable.length > 0) {
  beforeAll(async () => {
    stack = await startStack({ label: 'coding_agents', house: simHouse });
    for (const dialect of ['openai', 'anthropic'] as const) {
      const sim = await oneDialectSim(dialect);
      sims.push(sim);
      const saved = await stack.api('POST', '/v1/upstreams', {
        key: OWNER_KEY,
        body: {
          label: `Agents ${dialect}`,
          slug: ENDPOINT_SLUG[dialect],
          base_url: dialect === 'openai' ? `${sim.url}/v1` : sim.url,
          dialect,
          api_key: 'sk-agents-endpoint',
        },
      });
      expect(saved.body.probe).toMatchObject({ ok: true, dialect });
    }
  }, 60_000);
  afterAll(async () => {
    for (const sim of sims) await sim.stop();
    await stack?.stop();
  });
}

function report(
  agent: CodingAgent,
  outcome: CliOutcome,
  reply: string,
  exchanges: RecordedExchange[],
  outside: string[],
): string {
  const lines = [
    '',
    `── ${agent.title} ${agent.pkg.version}: exit ${outcome.exitCode ?? outcome.signal}${
      outcome.timedOut ? ` (killed after ${RUN_TIMEOUT_MS} ms)` : ''
    } in ${outcome.ms} ms`,
    `── requests through the gateway (${exchanges.length}):`,
    ...exchanges.map(
      (e) =>
        `   ${e.method} ${e.path} → ${e.status}${e.droppedFields ? ` (dropped: ${e.droppedFields})` : ''}${
          e.body ? `\n     ${e.body}` : ''
        }`,
    ),
    `── attempts beyond the gateway: ${outside.length ? outside.join(', ') : 'none'}`,
    `── answer: ${reply || '(none)'}`,
    `── stdout:\n${outcome.stdout.slice(-8_000)}`,
    `── stderr:\n${outcome.stderr.slice(-8_000)}`,
  ];
  return lines.join('\n');
}

for (const agent of CODING_AGENTS) {
  const title = `${agent.title} ${agent.pkg.version}`;
  const describeIt = agent.pkg.unavailable ? describe.skip : describe;
  describeIt(agent.pkg.unavailable ? `${title}: skipped, ${agent.pkg.unavailable}` : title, () => {
    let installed: InstalledPackage;
    beforeAll(async () => {
      installed = await agent.pkg.install();
    }, INSTALL_TIMEOUT_MS);

    it.each(MODEL_PATHS.map((modelPath) => [`${modelPath.name} (${modelPath.how(agent)})`, modelPath] as const))(
      'makes a tool loop on %s',
      async (_label, modelPath) => {
        const sandbox = await makeSandbox(agent.slug);
        const gateway = await startRecordingProxy(stack.edge.url);
        const refusing = await startRefusingProxy();
        try {
          const word = `sbcword${randomBytes(5).toString('hex')}`;
          const notePath = path.join(sandbox.work, 'note.txt');
          await writeFile(notePath, `${word} is the word this note holds.\n`);
          const invocation = await agent.prepare(
            {
              sandbox,
              env: baseEnv(sandbox, refusing.url),
              gatewayUrl: gateway.url,
              apiKey: OWNER_KEY,
              model: modelPath.model(agent),
              notePath,
            },
            installed,
          );
          const outcome = await runCli(invocation.command, invocation.args, {
            cwd: sandbox.work,
            env: invocation.env,
            timeoutMs: RUN_TIMEOUT_MS,
          });
          const reply = await invocation.reply(outcome.stdout);
          const exchanges = gateway.exchanges;
          try {
            // Each refusal's body is in the report below.
            const refused = exchanges.filter((e) => e.status < 200 || e.status >= 300);
            expect(refused.map((e) => `${e.method} ${e.path} → ${e.status}`)).toEqual([]);
            expect(outcome).toMatchObject({ exitCode: 0, timedOut: false });
            // The call and the call after the tool's result, both on the CLI's own dialect's route.
            const modelCalls = exchanges.filter(
              (e) => e.method === 'POST' && e.path.startsWith(ROUTE_OF[agent.dialect]),
            );
            expect(modelCalls.length).toBeGreaterThanOrEqual(2);
            expect(reply).toContain(`Simulated reply using the tool result:`);
            expect(reply).toContain(word);
            expect(refusing.attempts).toEqual([]);
          } catch (error) {
            (error as Error).message += report(agent, outcome, reply, exchanges, refusing.attempts);
            throw error;
          }
        } finally {
          await gateway.close();
          await refusing.close();
          await sandbox.remove();
        }
      },
      RUN_TIMEOUT_MS + 30_000,
    );
  });
}
