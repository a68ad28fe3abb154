import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { AGENTS, KEY_PLACEHOLDER, agentSetup, opencodeConfig, shellSnippet, shellWord } from './agent-setup';

const TARGET = { baseUrl: 'https://gw.example.com/', apiKey: 'sbc_live_0123456789abcdef', model: 'house' };

/** What a POSIX shell makes of `script`'s output. */
function sh(script: string): string {
  const run = spawnSync('sh', ['-c', script], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: '/home/u' } });
  if (run.status !== 0) throw new Error(`sh failed: ${run.stderr}`);
  return run.stdout;
}

describe('shellWord', () => {
  it('gives the shell back exactly the word, whatever it holds', () => {
    // One shell for every sample: each word printed NUL-terminated, so the words come back apart.
    const words = fc.sample(
      fc.string({ unit: 'binary', maxLength: 40 }).filter((word) => !word.includes('\0') && !word.startsWith('~')),
      { numRuns: 300, seed: 50 },
    );
    const printed = sh(`printf '%s\\0' ${words.map(shellWord).join(' ')}`)
      .split('\0')
      .slice(0, -1);
    expect(printed).toEqual(words);
  });

  it('leaves a home-relative path bare so the shell expands it', () => {
    expect(shellWord('~/.continue/config.yaml')).toBe('~/.continue/config.yaml');
    expect(sh(`printf %s ${shellWord('~/.continue/config.yaml')}`)).toBe('/home/u/.continue/config.yaml');
  });
});

describe('agentSetup', () => {
  it('names every agent in each dialect it speaks, and refuses one it does not', () => {
    for (const agent of AGENTS)
      for (const dialect of agent.dialects) expect(agentSetup(agent.id, TARGET, dialect).dialect).toBe(dialect);
    expect(() => agentSetup('codex', TARGET, 'chat')).toThrow('Codex CLI does not speak chat');
  });

  it('Claude Code: its base URL (no /v1, no trailing slash), the key as a bearer token, the model twice', () => {
    expect(agentSetup('claude-code', TARGET).env).toEqual([
      ['ANTHROPIC_BASE_URL', 'https://gw.example.com'],
      ['ANTHROPIC_AUTH_TOKEN', TARGET.apiKey],
      ['ANTHROPIC_MODEL', 'house'],
      ['ANTHROPIC_DEFAULT_HAIKU_MODEL', 'house'],
    ]);
  });

  it('Codex: the command line and the config file name the same provider on the Responses wire', () => {
    const setup = agentSetup('codex', TARGET);
    expect(setup.env).toEqual([['SBC_API_KEY', TARGET.apiKey]]);
    const [argv] = setup.commands;
    expect(argv).toEqual([
      'codex',
      '-c',
      'model_providers.sbc={ name = "Model gateway", base_url = "https://gw.example.com/v1", ' +
        'env_key = "SBC_API_KEY", wire_api = "responses" }',
      '-c',
      'model_provider="sbc"',
      '-m',
      'house',
    ]);
    const file = setup.files[0]!;
    expect(file.path).toBe('~/.codex/config.toml');
    for (const line of ['model_provider = "sbc"', 'model = "house"', '[model_providers.sbc]', 'wire_api = "responses"'])
      expect(file.text).toContain(line);
    // The key itself is never written into the file.
    expect(file.text).not.toContain(TARGET.apiKey);
  });

  it('opencode: the same config in the variable and in the file, for either provider package', () => {
    for (const dialect of ['chat', 'messages'] as const) {
      const setup = agentSetup('opencode', TARGET, dialect);
      const config = opencodeConfig(TARGET, dialect);
      expect(setup.env).toEqual([
        ['SBC_API_KEY', TARGET.apiKey],
        ['OPENCODE_CONFIG_CONTENT', JSON.stringify(config)],
      ]);
      expect(JSON.parse(setup.files[0]!.text)).toEqual(config);
      expect(JSON.stringify(config)).not.toContain(TARGET.apiKey);
    }
    expect(opencodeConfig(TARGET, 'messages')).toMatchObject({
      provider: { sbc: { npm: '@ai-sdk/anthropic', options: { baseURL: 'https://gw.example.com/v1' } } },
      model: 'sbc/house',
    });
  });

  it('Continue: a config file that YAML reads back with the key and the base URL as given', () => {
    const hostile = { ...TARGET, apiKey: 'sbc_"quoted": yes\n- [x]' };
    const setup = agentSetup('continue', hostile, 'messages');
    const config = parseYaml(setup.files[0]!.text) as { models: Record<string, unknown>[] };
    expect(config.models[0]).toMatchObject({
      provider: 'anthropic',
      apiBase: 'https://gw.example.com/v1/',
      apiKey: hostile.apiKey,
      model: 'house',
    });
  });

  it('a shell that runs the snippet gets every variable exactly, even a hostile key or model', () => {
    const hostile = { baseUrl: 'https://gw.test', apiKey: `sbc_'$(touch /tmp/x)"\`;\n`, model: 'my endpoint/m $HOME' };
    for (const agent of AGENTS) {
      for (const dialect of agent.dialects) {
        const setup = agentSetup(agent.id, hostile, dialect);
        const exports = shellSnippet({ ...setup, commands: [] });
        for (const [name, value] of setup.env) expect(sh(`${exports}printf %s "$${name}"`)).toBe(value);
      }
    }
  });

  it('a snippet ends with the command that starts the agent, its words quoted as needed', () => {
    expect(shellSnippet(agentSetup('claude-code', { ...TARGET, apiKey: KEY_PLACEHOLDER }))).toBe(
      [
        'export ANTHROPIC_BASE_URL=https://gw.example.com',
        "export ANTHROPIC_AUTH_TOKEN='<your sbc_ key>'",
        'export ANTHROPIC_MODEL=house',
        'export ANTHROPIC_DEFAULT_HAIKU_MODEL=house',
        'claude',
        '',
      ].join('\n'),
    );
    const cline = shellSnippet(agentSetup('cline', TARGET)).trim().split('\n');
    expect(cline).toEqual([`cline auth -p openai -k ${TARGET.apiKey} -m house -b https://gw.example.com/v1`, 'cline']);
  });
});

describe('docs/agents.md', () => {
  const example = { baseUrl: 'http://localhost:8080', apiKey: KEY_PLACEHOLDER, model: 'house' };

  it('shows each agent’s snippet in every dialect, and its config files, as this library renders them', () => {
    const doc = readFileSync(path.join(__dirname, '../../../docs/agents.md'), 'utf8');
    for (const agent of AGENTS) {
      for (const dialect of agent.dialects) {
        const setup = agentSetup(agent.id, example, dialect);
        expect(doc).toContain(shellSnippet(setup));
        // A file is shown once, for the dialect the agent uses unless told otherwise.
        if (dialect === agent.dialects[0]) for (const file of setup.files) expect(doc).toContain(file.text);
      }
    }
  });
});
