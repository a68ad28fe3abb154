import type { Request, RequestHandler } from 'express';
import { SimError } from '../wire/errors';

/**
 * `GET /v1/models` and `GET /v1/models/{id}` (dialects.md §5), negotiated by header: Anthropic's paged shape
 * when the request carries `anthropic-version`, else OpenAI's list. Every listed model is owned by the
 * simulator; any other id is still accepted by the model routes.
 */

export const BUILT_IN_MODELS = ['sim-large', 'sim-small'];

/** Fixed so listings are deterministic: 2026-01-01T00:00:00Z. */
const CREATED = 1_767_225_600;
const CREATED_AT = new Date(CREATED * 1000).toISOString().replace('.000Z', 'Z');

/** The list's shape: the one dialect served, else by the request's `anthropic-version` header. */
const wantsAnthropic = (req: Request, only: 'openai' | 'anthropic' | undefined): boolean =>
  only ? only === 'anthropic' : req.headers['anthropic-version'] !== undefined;

const openAiModel = (id: string) => ({ id, object: 'model', created: CREATED, owned_by: 'sim-upstream' });
const anthropicModel = (id: string) => ({
  type: 'model',
  id,
  display_name: `${id} (sim-upstream simulator)`,
  created_at: CREATED_AT,
});

function queryString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** One page of `ids` (listed newest first) by Anthropic's `limit` / `after_id` / `before_id` rules. */
function anthropicPage(ids: string[], query: { limit?: string; after_id?: string; before_id?: string }) {
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new SimError(400, 'limit: Input should be between 1 and 1000', 'limit');
  let page: string[];
  let hasMore: boolean;
  if (query.before_id !== undefined) {
    const end = ids.indexOf(query.before_id);
    const before = end < 0 ? [] : ids.slice(0, end);
    page = before.slice(-limit);
    hasMore = before.length > limit;
  } else {
    const begin = query.after_id === undefined ? 0 : ids.indexOf(query.after_id) + 1;
    const after = begin <= 0 && query.after_id !== undefined ? [] : ids.slice(begin);
    page = after.slice(0, limit);
    hasMore = after.length > limit;
  }
  return {
    data: page.map(anthropicModel),
    has_more: hasMore,
    first_id: page[0] ?? null,
    last_id: page[page.length - 1] ?? null,
  };
}

export function listModelsRoute(models: string[], only?: 'openai' | 'anthropic'): RequestHandler {
  return (req, res) => {
    if (!wantsAnthropic(req, only)) {
      res.json({ object: 'list', data: models.map(openAiModel) });
      return;
    }
    res.json(
      anthropicPage(models, {
        limit: queryString(req.query.limit),
        after_id: queryString(req.query.after_id),
        before_id: queryString(req.query.before_id),
      }),
    );
  };
}

export function getModelRoute(only?: 'openai' | 'anthropic'): RequestHandler {
  return (req, res) => {
    const raw = (req.params as { id?: string | string[] }).id ?? '';
    const id = Array.isArray(raw) ? raw.join('/') : raw;
    res.json(wantsAnthropic(req, only) ? anthropicModel(id) : openAiModel(id));
  };
}
