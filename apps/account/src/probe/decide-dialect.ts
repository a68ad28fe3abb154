import type { UpstreamDialect } from '@sbc/dialects';

/**
 * How an `auto` endpoint's dialect is decided (issue 17). Many self-hosted servers and proxies answer the model
 * list whatever credential header comes with it, so "which probe answered" is not enough: the list's shape
 * says who wrote it. Anthropic's items carry `type: "model"`, `display_name` and `created_at` (RFC 3339);
 * OpenAI's carry `object: "model"`, `created` (Unix seconds) and `owned_by` (dialects.md §5).
 */

/** Whose model-list shape a list has; `unknown` for a bare `{id}` list, an empty one or a mixture. */
export type ListShape = UpstreamDialect | 'unknown';

export function listShape(items: readonly unknown[]): ListShape {
  let shape: ListShape | undefined;
  for (const raw of items) {
    const item = (raw ?? {}) as Record<string, unknown>;
    const anthropic =
      item.type === 'model' && typeof item.display_name === 'string' && typeof item.created_at === 'string';
    const openai = item.object === 'model' && (typeof item.created === 'number' || typeof item.owned_by === 'string');
    const mine: ListShape = anthropic === openai ? 'unknown' : anthropic ? 'anthropic' : 'openai';
    if (shape !== undefined && shape !== mine) return 'unknown';
    shape = mine;
  }
  return shape ?? 'unknown';
}

/** What one dialect's probe of the model list found: its list's shape, or that it did not answer. */
export type ListAnswer = { ok: true; shape: ListShape } | { ok: false };

export type Decision =
  | { dialect: UpstreamDialect; reason: string }
  /** Both answered and the shapes do not say: the caller sends a one-token call in each dialect. */
  | { ask: true; reason: string };

const SHAPE_WORDS: Record<UpstreamDialect, string> = {
  anthropic: 'Anthropic\'s shape (type "model", display_name, created_at)',
  openai: 'OpenAI\'s shape (object "model", created, owned_by)',
};

/**
 * The dialect of an `auto` endpoint from its two model-list answers (at least one answered), with the reason
 * in words for the probe report. `preferred` breaks a tie only where the endpoint plainly speaks both.
 */
export function decideByShape(answers: Record<UpstreamDialect, ListAnswer>, preferred: UpstreamDialect): Decision {
  const { openai, anthropic } = answers;
  if (!openai.ok)
    return {
      dialect: 'anthropic',
      reason: 'only the Anthropic probe (x-api-key, anthropic-version) answered the model list',
    };
  if (!anthropic.ok) return { dialect: 'openai', reason: 'only the OpenAI probe (Bearer key) answered the model list' };
  if (openai.shape === 'openai' && anthropic.shape === 'anthropic') {
    return {
      dialect: preferred,
      reason:
        `both probes answered, each in its own dialect's shape (the endpoint speaks both); ${preferred} ` +
        `preferred for this host`,
    };
  }
  const known = new Set(
    [openai.shape, anthropic.shape].filter((shape): shape is UpstreamDialect => shape !== 'unknown'),
  );
  if (known.size === 1) {
    const [dialect] = [...known] as [UpstreamDialect];
    return { dialect, reason: `both probes answered; the model list has ${SHAPE_WORDS[dialect]}` };
  }
  return { ask: true, reason: 'both probes answered with a model list whose shape names neither dialect' };
}

/** The decision after the one-token calls: the dialect whose call was answered. */
export function decideByCalls(
  answered: Record<UpstreamDialect, boolean>,
  preferred: UpstreamDialect,
  before: string,
): { dialect: UpstreamDialect; reason: string } {
  if (answered.openai && !answered.anthropic)
    return { dialect: 'openai', reason: `${before}; a one-token call was answered on /v1/chat/completions only` };
  if (answered.anthropic && !answered.openai)
    return { dialect: 'anthropic', reason: `${before}; a one-token call was answered on /v1/messages only` };
  const which = answered.openai ? 'both one-token calls were answered' : 'neither one-token call was answered';
  return { dialect: preferred, reason: `${before}; ${which}, so ${preferred} is preferred for this host` };
}
