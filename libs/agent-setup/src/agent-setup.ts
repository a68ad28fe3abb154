/**
 * How each coding agent is pointed at the gateway: the one description that the console's copy buttons, the
 * /developers page and the real-CLI suite (e2e/src/agents) all use, so what a person copies is what CI runs.
 * docs/agents.md shows the same setups (a unit test checks it). Pure and dependency-free: the console bundles it.
 */

export type AgentId = 'claude-code' | 'codex' | 'opencode' | 'qwen-code' | 'continue' | 'cline';

/** The gateway route an agent calls: chat completions, Responses or Messages. */
export type AgentDialect = 'chat' | 'responses' | 'messages';

interface AgentInfo {
  id: AgentId;
  title: string;
  /** The npm package that installs it. */
  npm: string;
  /** The dialects it can speak, the one it uses unless told otherwise first. */
  dialects: readonly AgentDialect[];
}

export const AGENTS: readonly AgentInfo[] = [
  { id: 'claude-code', title: 'Claude Code', npm: '@anthropic-ai/claude-code', dialects: ['messages'] },
  { id: 'codex', title: 'Codex CLI', npm: '@openai/codex', dialects: ['responses'] },
  { id: 'opencode', title: 'opencode', npm: 'opencode-ai', dialects: ['chat', 'messages'] },
  { id: 'qwen-code', title: 'Qwen Code', npm: '@qwen-code/qwen-code', dialects: ['chat', 'messages', 'responses'] },
  { id: 'continue', title: 'Continue (cn)', npm: '@continuedev/cli', dialects: ['chat', 'messages'] },
  { id: 'cline', title: 'Cline', npm: 'cline', dialects: ['chat'] },
];

interface SetupTarget {
  /** The gateway's BASE_URL (a trailing slash is ignored). */
  baseUrl: string;
  /** The caller key, or KEY_PLACEHOLDER where the secret is not at hand. */
  apiKey: string;
  model: string;
}

/** Stands in for the secret where it is not at hand: the console shows a secret only when it is minted. */
export const KEY_PLACEHOLDER = '<your sbc_ key>';
export const DEFAULT_MODEL = 'house';

interface ConfigFile {
  /** Where it goes, as a person writes it (`~/.codex/config.toml`). */
  path: string;
  text: string;
}

export interface AgentSetup {
  agent: AgentId;
  title: string;
  dialect: AgentDialect;
  /** Variables to set, in order. */
  env: [string, string][];
  /** Commands in order: any one-time setup, then the one that starts the agent. Each is an argv. */
  commands: string[][];
  /**
   * Config files. For Codex and opencode they hold what `env` and `commands` say, for a lasting setup; for
   * Continue the file is the setup.
   */
  files: ConfigFile[];
}

/** The name of the variable that holds the key, for agents whose config names a variable instead of a value. */
const KEY_VARIABLE = 'SBC_API_KEY';
const PROVIDER_ID = 'sbc';
const PROVIDER_NAME = 'Model gateway';

const trimmed = (baseUrl: string) => baseUrl.replace(/\/+$/, '');

function claudeCode(target: SetupTarget): Omit<AgentSetup, 'agent' | 'title' | 'dialect'> {
  return {
    env: [
      ['ANTHROPIC_BASE_URL', trimmed(target.baseUrl)],
      ['ANTHROPIC_AUTH_TOKEN', target.apiKey],
      ['ANTHROPIC_MODEL', target.model],
      // Its background calls (titles, summaries, the "fast" model) name the Haiku model.
      ['ANTHROPIC_DEFAULT_HAIKU_MODEL', target.model],
    ],
    commands: [['claude']],
    files: [],
  };
}

function codex(target: SetupTarget): Omit<AgentSetup, 'agent' | 'title' | 'dialect'> {
  const provider: [string, string][] = [
    ['name', PROVIDER_NAME],
    ['base_url', `${trimmed(target.baseUrl)}/v1`],
    ['env_key', KEY_VARIABLE],
    ['wire_api', 'responses'],
  ];
  const toml = (value: string) => JSON.stringify(value);
  const inline = `{ ${provider.map(([key, value]) => `${key} = ${toml(value)}`).join(', ')} }`;
  const file = [
    `model_provider = ${toml(PROVIDER_ID)}`,
    `model = ${toml(target.model)}`,
    '',
    `[model_providers.${PROVIDER_ID}]`,
    ...provider.map(([key, value]) => `${key} = ${toml(value)}`),
    '',
  ].join('\n');
  return {
    env: [[KEY_VARIABLE, target.apiKey]],
    commands: [
      [
        'codex',
        '-c',
        `model_providers.${PROVIDER_ID}=${inline}`,
        '-c',
        `model_provider=${toml(PROVIDER_ID)}`,
        '-m',
        target.model,
      ],
    ],
    files: [{ path: '~/.codex/config.toml', text: file }],
  };
}

/** opencode's config: one custom provider of the AI SDK package for the dialect, its key read from SBC_API_KEY. */
export function opencodeConfig(target: SetupTarget, dialect: 'chat' | 'messages'): Record<string, unknown> {
  return {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      [PROVIDER_ID]: {
        npm: dialect === 'chat' ? '@ai-sdk/openai-compatible' : '@ai-sdk/anthropic',
        name: PROVIDER_NAME,
        options: { baseURL: `${trimmed(target.baseUrl)}/v1`, apiKey: `{env:${KEY_VARIABLE}}` },
        models: { [target.model]: { name: target.model } },
      },
    },
    model: `${PROVIDER_ID}/${target.model}`,
    small_model: `${PROVIDER_ID}/${target.model}`,
  };
}

function opencode(target: SetupTarget, dialect: AgentDialect): Omit<AgentSetup, 'agent' | 'title' | 'dialect'> {
  const config = opencodeConfig(target, dialect === 'messages' ? 'messages' : 'chat');
  return {
    env: [
      [KEY_VARIABLE, target.apiKey],
      ['OPENCODE_CONFIG_CONTENT', JSON.stringify(config)],
    ],
    commands: [['opencode']],
    files: [{ path: '~/.config/opencode/opencode.json', text: `${JSON.stringify(config, null, 2)}\n` }],
  };
}

function qwenCode(target: SetupTarget, dialect: AgentDialect): Omit<AgentSetup, 'agent' | 'title' | 'dialect'> {
  const base = trimmed(target.baseUrl);
  if (dialect === 'messages') {
    return {
      env: [
        ['ANTHROPIC_BASE_URL', base],
        ['ANTHROPIC_API_KEY', target.apiKey],
        ['ANTHROPIC_MODEL', target.model],
      ],
      commands: [['qwen', '--auth-type', 'anthropic']],
      files: [],
    };
  }
  return {
    env: [
      ['OPENAI_BASE_URL', `${base}/v1`],
      ['OPENAI_API_KEY', target.apiKey],
      ['OPENAI_MODEL', target.model],
    ],
    commands: [['qwen', '--auth-type', dialect === 'responses' ? 'openai-responses' : 'openai']],
    files: [],
  };
}

function continueCli(target: SetupTarget, dialect: AgentDialect): Omit<AgentSetup, 'agent' | 'title' | 'dialect'> {
  const yaml = (value: string) => JSON.stringify(value);
  const path = '~/.continue/config.yaml';
  const text = [
    `name: ${yaml(PROVIDER_NAME)}`,
    'version: 1.0.0',
    'schema: v1',
    'models:',
    `  - name: ${yaml(target.model)}`,
    `    provider: ${dialect === 'messages' ? 'anthropic' : 'openai'}`,
    `    model: ${yaml(target.model)}`,
    // Continue joins paths onto apiBase, so it ends in a slash.
    `    apiBase: ${yaml(`${trimmed(target.baseUrl)}/v1/`)}`,
    `    apiKey: ${yaml(target.apiKey)}`,
    '    roles: [chat, edit, apply]',
    '',
  ].join('\n');
  return { env: [], commands: [['cn', '--config', path]], files: [{ path, text }] };
}

function cline(target: SetupTarget): Omit<AgentSetup, 'agent' | 'title' | 'dialect'> {
  return {
    env: [],
    commands: [
      ['cline', 'auth', '-p', 'openai', '-k', target.apiKey, '-m', target.model, '-b', `${trimmed(target.baseUrl)}/v1`],
      ['cline'],
    ],
    files: [],
  };
}

/** The setup of `agent` for `target`, in `dialect` (default: the first the agent speaks). */
export function agentSetup(agent: AgentId, target: SetupTarget, dialect?: AgentDialect): AgentSetup {
  const info = AGENTS.find((candidate) => candidate.id === agent);
  if (!info) throw new Error(`unknown agent ${agent}`);
  const spoken = dialect ?? info.dialects[0]!;
  if (!info.dialects.includes(spoken)) throw new Error(`${info.title} does not speak ${spoken}`);
  const parts = {
    'claude-code': () => claudeCode(target),
    codex: () => codex(target),
    opencode: () => opencode(target, spoken),
    'qwen-code': () => qwenCode(target, spoken),
    continue: () => continueCli(target, spoken),
    cline: () => cline(target),
  }[agent]();
  return { agent, title: info.title, dialect: spoken, ...parts };
}

const BARE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** A word for a POSIX shell: bare when it can be, else single-quoted. A leading `~/` stays bare so it expands. */
export function shellWord(word: string): string {
  if (BARE_WORD.test(word) || /^~\/[A-Za-z0-9_@%+=:,./-]*$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The setup as lines to paste into a shell: its variables exported, then its commands. Files are not written. */
export function shellSnippet(setup: AgentSetup): string {
  const lines = [
    ...setup.env.map(([name, value]) => `export ${name}=${shellWord(value)}`),
    ...setup.commands.map((argv) => argv.map(shellWord).join(' ')),
  ];
  return `${lines.join('\n')}\n`;
}
