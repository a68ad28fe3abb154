import { AGENTS, DEFAULT_MODEL, KEY_PLACEHOLDER, agentSetup, shellSnippet, type AgentDialect } from '@sbc/agent-setup';
import { escapeHtml } from './html';

// The coding agents as a caller meets them: the setups come from @sbc/agent-setup, the same ones the console's Keys
// page copies and the CLI suite (e2e/src/agents) runs; docs/agents.md has the longer story per agent.

const DIALECT_NAMES: Record<AgentDialect, string> = {
  chat: 'chat completions',
  responses: 'Responses',
  messages: 'Messages',
};

/** Per agent, what a caller should know beyond the snippet (the CLI's own behaviour as recorded). */
const NOTES: Record<(typeof AGENTS)[number]['id'], string> = {
  'claude-code':
    'Always streams Messages with an <code>anthropic-beta</code> header. To an Anthropic-dialect model ' +
    '(<code>house-omni</code>, your Anthropic endpoint) the call goes through as sent; to an OpenAI-dialect one its ' +
    'mid-conversation system message stays in place and <code>cache_control</code>, <code>context_management</code> ' +
    'and <code>thinking.display</code> are dropped and named in <code>x-sbc-dropped-fields</code>. ' +
    '<code>CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1</code> keeps it from calling anything else.',
  codex:
    'Speaks Responses only, so every target is a translation: its <code>namespace</code> tools (sub-agents) are ' +
    'offered as plain functions and come back with their <code>namespace</code>; its <code>web_search</code> tool, ' +
    '<code>prompt_cache_key</code> and <code>reasoning.summary</code> are dropped and named in ' +
    '<code>x-sbc-dropped-fields</code>. The config file form is shown in the guide; set ' +
    '<code>[features] plugins = false</code> and <code>apps = false</code> to keep it from syncing from other hosts.',
  opencode:
    'Both provider packages are built in. Chat completions go through as sent to an OpenAI-dialect model; with ' +
    'the Anthropic package, <code>cache_control</code> is dropped on an OpenAI-dialect one.',
  'qwen-code':
    'Needs Node 22 or later. With Messages it asks for a thinking budget equal to <code>max_tokens</code>, which ' +
    'Anthropic’s API refuses: set <code>model.generationConfig.reasoning.budget_tokens</code> below it (16000) in ' +
    '<code>~/.qwen/settings.json</code>, or use chat completions or Responses.',
  continue: 'Put the file in place, then run the command. Use <code>provider: anthropic</code> for Messages.',
  cline: '<code>cline auth</code> saves the provider once; then <code>cline</code> starts it.',
};

function code(text: string): string {
  return `<pre tabindex="0"><code>${escapeHtml(text)}</code></pre>`;
}

/** The /developers section on coding agents: per agent, the exact setup in each dialect it speaks. */
export function agentsSection(baseUrl: string): string {
  const target = { baseUrl, apiKey: KEY_PLACEHOLDER, model: DEFAULT_MODEL };
  const toc = AGENTS.map((agent) => `<li><a href="#agents-${agent.id}">${escapeHtml(agent.title)}</a></li>`).join('\n');
  const entries = AGENTS.map((agent) => {
    const variants = agent.dialects.map((dialect) => {
      const setup = agentSetup(agent.id, target, dialect);
      const files = dialect === agent.dialects[0] ? setup.files : [];
      return (
        `<p>${agent.dialects.length > 1 ? 'With' : 'Speaks'} ${DIALECT_NAMES[dialect]}:</p>` +
        files.map((file) => `<p class="file">${escapeHtml(file.path)}</p>${code(file.text)}`).join('') +
        code(shellSnippet(setup))
      );
    });
    return `<section aria-labelledby="agents-${agent.id}" class="snippet">
<h3 id="agents-${agent.id}">${escapeHtml(agent.title)} <span class="status">${escapeHtml(agent.npm)}</span></h3>
${variants.join('\n')}
<p>${NOTES[agent.id]}</p>
</section>`;
  }).join('\n');
  return `<p>Each coding agent below is pointed at this service by the lines shown, with <code>${escapeHtml(
    KEY_PLACEHOLDER,
  )}</code> standing for a caller key and <code>${DEFAULT_MODEL}</code> for any model the key may call
(<code>house-omni</code> is served in the Anthropic dialect; <code>my-engine/&lt;model&gt;</code> is a model of your
endpoint). The console's <a href="/console/keys">Keys</a> page copies the same lines with your key in them. Claude
Code, Codex CLI and opencode run a tool loop through this service on every model path in the test suite; fields a
target cannot carry are named in <code>x-sbc-dropped-fields</code>.</p>
<ul class="toc">${toc}</ul>
${entries}`;
}
