/**
 * How each coding-agent CLI is configured and run headless against the gateway: the setup a person copies from
 * the console or docs/agents.md (`@sbc/agent-setup`: environment and command line), plus the switches that keep
 * it from reaching anything but the gateway (telemetry, update checks, plugin syncs) and the one tool its loop
 * takes, allowed for headless use. The prompt is the simulator's `sim:call:<tool> {json}` directive, so the model
 * calls that tool with those arguments and then answers with the start of the tool's result.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { agentSetup, type AgentId } from '@sbc/agent-setup';
import { registryPackage, type InstalledPackage, type RegistryPackage } from '../support/registry-packages';
import type { Sandbox } from './run-cli';

/** `SBC_AGENTS_LATEST=1` (`npm run agents:latest`): each CLI's newest release instead of the pinned one. */
const LATEST = process.env.SBC_AGENTS_LATEST === '1';
const pinned = (name: string, version: string) => registryPackage(name, LATEST ? 'latest' : version);

const CLAUDE_CODE = pinned('@anthropic-ai/claude-code', '2.1.332');
const CODEX = pinned('@openai/codex', '0.171.0');
const OPENCODE = pinned('opencode-ai', '1.18.33');

/** The caller dialect the CLI speaks, named by the gateway route it calls. */
export type AgentDialect = 'messages' | 'chat' | 'responses';

export const ROUTE_OF: Record<AgentDialect, string> = {
  messages: '/v1/messages',
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
};

export interface AgentCall {
  sandbox: Sandbox;
  /** The environment every CLI starts from (run-cli's baseEnv). */
  env: Record<string, string>;
  /** The gateway's origin as the CLI dials it (the recording proxy), without `/v1`. */
  gatewayUrl: string;
  apiKey: string;
  model: string;
  /** The absolute path of the file the tool loop reads. */
  notePath: string;
}

export interface AgentInvocation {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** The agent's final answer, from what the run printed (or wrote). */
  reply(stdout: string): Promise<string>;
}

export interface CodingAgent {
  title: string;
  /** A short name for folders. */
  slug: string;
  pkg: RegistryPackage;
  dialect: AgentDialect;
  /** The endpoint dialect its custom-endpoint path uses: the provider a user of this CLI would bring. */
  endpointDialect: 'openai' | 'anthropic';
  prepare(call: AgentCall, installed: InstalledPackage): Promise<AgentInvocation>;
}

/** The setup a person copies for this agent, aimed at the run's gateway, key and model. */
function setupFor(agent: AgentId, call: AgentCall, dialect?: 'chat' | 'messages') {
  const setup = agentSetup(agent, { baseUrl: call.gatewayUrl, apiKey: call.apiKey, model: call.model }, dialect);
  return { env: Object.fromEntries(setup.env), args: setup.commands.at(-1)!.slice(1) };
}

async function writeConfig(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

/** Claude Code: `claude -p … --output-format json`, which prints one JSON object whose `result` is the answer. */
const claudeCode: CodingAgent = {
  title: 'Claude Code',
  slug: 'claude',
  pkg: CLAUDE_CODE,
  dialect: 'messages',
  endpointDialect: 'anthropic',
  async prepare(call, installed) {
    // Read is the tool of the loop; allowing it here is what a headless user does in settings.json.
    await writeConfig(
      path.join(call.sandbox.home, '.claude', 'settings.json'),
      JSON.stringify({ permissions: { allow: ['Read'] } }, null, 2),
    );
    const setup = setupFor('claude-code', call);
    return {
      command: installed.bin('claude'),
      args: [
        ...setup.args,
        '-p',
        `sim:call:Read ${JSON.stringify({ file_path: call.notePath })}`,
        '--output-format',
        'json',
        '--allowedTools',
        'Read',
      ],
      env: {
        ...call.env,
        ...setup.env,
        CLAUDE_CONFIG_DIR: path.join(call.sandbox.home, '.claude'),
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
      },
      reply: async (stdout) => {
        try {
          const result = (JSON.parse(stdout) as { result?: unknown }).result;
          return typeof result === 'string' ? result : '';
        } catch {
          return '';
        }
      },
    };
  },
};

/**
 * Codex CLI: a custom model provider on the Responses wire (the only one Codex speaks), `codex exec`, its last
 * message written to a file. Its shell tool (`exec_command`) runs `cat` in the read-only sandbox, without asking.
 */
const codex: CodingAgent = {
  title: 'Codex CLI',
  slug: 'codex',
  pkg: CODEX,
  dialect: 'responses',
  endpointDialect: 'openai',
  async prepare(call, installed) {
    const codexHome = path.join(call.sandbox.home, '.codex');
    const lastMessage = path.join(call.sandbox.home, 'last-message.txt');
    // The gateway comes from the command line, as copied; the file holds only what keeps the run headless and
    // local: plugin and app syncs reach github.com and chatgpt.com at start, analytics is its telemetry.
    await writeConfig(
      path.join(codexHome, 'config.toml'),
      [
        'approval_policy = "never"',
        'sandbox_mode = "read-only"',
        'check_for_update_on_startup = false',
        '',
        '[features]',
        'plugins = false',
        'remote_plugin = false',
        'apps = false',
        '',
        '[analytics]',
        'enabled = false',
        '',
      ].join('\n'),
    );
    const setup = setupFor('codex', call);
    return {
      command: installed.bin('codex'),
      args: [
        ...setup.args,
        'exec',
        '--skip-git-repo-check',
        '--output-last-message',
        lastMessage,
        `sim:call:exec_command ${JSON.stringify({ cmd: `cat ${call.notePath}` })}`,
      ],
      env: { ...call.env, ...setup.env, CODEX_HOME: codexHome },
      reply: () => readFile(lastMessage, 'utf8').catch(() => ''),
    };
  },
};

/**
 * opencode with a custom provider of the given AI SDK package: `@ai-sdk/openai-compatible` (chat completions) or
 * `@ai-sdk/anthropic` (Messages). `opencode run --format json` prints one event a line; the answer is its text parts.
 */
function opencode(provider: '@ai-sdk/openai-compatible' | '@ai-sdk/anthropic'): CodingAgent {
  const chat = provider === '@ai-sdk/openai-compatible';
  return {
    title: `opencode (${provider})`,
    slug: chat ? 'opencode-chat' : 'opencode-messages',
    pkg: OPENCODE,
    dialect: chat ? 'chat' : 'messages',
    endpointDialect: chat ? 'openai' : 'anthropic',
    async prepare(call, installed) {
      // The gateway comes in OPENCODE_CONFIG_CONTENT, as copied; the file adds what a headless run needs.
      const config = { permission: { read: 'allow' }, autoupdate: false, share: 'disabled' };
      await writeConfig(
        path.join(call.env.XDG_CONFIG_HOME!, 'opencode', 'opencode.json'),
        JSON.stringify(config, null, 2),
      );
      const setup = setupFor('opencode', call, chat ? 'chat' : 'messages');
      return {
        command: installed.bin('opencode'),
        // `run` joins its words with spaces, quoting any word that has one: the directive and its JSON (which has
        // none) go as two words so the prompt reads exactly `sim:call:read {…}`.
        args: [...setup.args, 'run', '--format', 'json', 'sim:call:read', JSON.stringify({ filePath: call.notePath })],
        env: {
          ...call.env,
          ...setup.env,
          OPENCODE_DISABLE_AUTOUPDATE: '1',
          OPENCODE_DISABLE_MODELS_FETCH: '1',
          OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
          OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
          OPENCODE_DISABLE_SHARE: '1',
          OPENCODE_DISABLE_CLAUDE_CODE: '1',
          OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
        },
        reply: async (stdout) => textParts(stdout),
      };
    },
  };
}

function textParts(jsonLines: string): string {
  const texts: string[] = [];
  for (const line of jsonLines.split('\n')) {
    try {
      const event = JSON.parse(line) as { type?: string; part?: { text?: unknown } };
      if (event.type === 'text' && typeof event.part?.text === 'string') texts.push(event.part.text);
    } catch {
      // Not an event line.
    }
  }
  return texts.join('\n');
}

export const CODING_AGENTS: CodingAgent[] = [
  claudeCode,
  codex,
  opencode('@ai-sdk/openai-compatible'),
  opencode('@ai-sdk/anthropic'),
];
