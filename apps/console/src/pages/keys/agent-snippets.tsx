import { useState } from 'react';
import { agentSetup, KEY_PLACEHOLDER, shellSnippet, type AgentId } from '@sbc/agent-setup';

/** The agents a key can be copied for here; docs/agents.md and /developers have the others. */
const COPYABLE: { id: AgentId; label: string }[] = [
  { id: 'claude-code', label: 'Claude Code' },
  { id: 'codex', label: 'Codex' },
  { id: 'opencode', label: 'opencode' },
];

/**
 * The edge's BASE_URL, which the edge writes into the console's page (`<meta name="sbc-base-url">`); the page's own
 * origin only when it is missing (the console served by Vite in development).
 */
function edgeBaseUrl(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="sbc-base-url"]');
  return meta?.content || window.location.origin;
}

/**
 * "Copy for Claude Code / Codex / opencode": each agent's setup for this edge, shown and copied as shell lines. With
 * the secret when it is at hand (right after minting), else with a placeholder for it.
 */
export function AgentSnippets({ secret, model }: { secret?: string; model: string }) {
  const [copied, setCopied] = useState<AgentId>();
  const target = { baseUrl: edgeBaseUrl(), apiKey: secret ?? KEY_PLACEHOLDER, model };
  return (
    <section aria-label="Use this key with a coding agent" className="agent-snippets">
      <h3>Use it with a coding agent</h3>
      <p>
        Paste into a terminal.{' '}
        {secret
          ? 'These lines hold the secret: keep them out of shared files and history.'
          : `The secret is shown only when a key is minted: put it where ${KEY_PLACEHOLDER} is.`}{' '}
        Every agent and its config file form: <a href="/developers#coding-agents">developer docs</a>.
      </p>
      {COPYABLE.map(({ id, label }) => {
        const snippet = shellSnippet(agentSetup(id, target));
        return (
          <div key={id} className="agent-snippet">
            <h4 id={`agent-${id}`}>{label}</h4>
            <pre className="code" aria-labelledby={`agent-${id}`} tabIndex={0}>
              {snippet}
            </pre>
            <div className="actions">
              <button
                type="button"
                onClick={() =>
                  void navigator.clipboard?.writeText(snippet).then(
                    () => setCopied(id),
                    () => setCopied(undefined),
                  )
                }
              >
                {`Copy for ${label}`}
              </button>
              <span role="status">{copied === id ? `Copied the ${label} setup` : ''}</span>
            </div>
          </div>
        );
      })}
    </section>
  );
}
