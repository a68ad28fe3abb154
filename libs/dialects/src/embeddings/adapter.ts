import type { CallerDialect, Passthrough } from '../adapter';
import { parseUpstreamError, renderErrorBody } from '../error-bodies';
import { checkFallbackModels, withoutFallbackModels } from '../fallback-models';
import { isObject, objectOf } from '../json';
import { DialectRequestError } from '../request-error';
import { mergeUsage, usageFromChat, ZERO_USAGE } from '../usage';
import { UpstreamError } from '../upstream-error';
import { checkEmbeddingsRequest } from './check-request';
import { openAiTokenLimitHeaders } from '../token-limit-headers';

// `POST /v1/embeddings`, OpenAI's shape. An embedding call is one exchange with no stream and no output tokens,
// so it rides the model-call path as a caller dialect whose every engine takes its body as it is: only an
// OpenAI-compatible engine can serve it (the Anthropic dialect has no embeddings).

function badReply(message: string): UpstreamError {
  return new UpstreamError('bad_reply', { status: 502, message, code: null, param: null });
}

/** One item of the upstream's `data`, in the exact shape OpenAI's document gives an Embedding. */
function embeddingItem(item: unknown, position: number): Record<string, unknown> {
  const vector = isObject(item) ? item.embedding : undefined;
  // A float vector or its base64 form; the first element stands for the rest (vectors run to thousands).
  const valid = typeof vector === 'string' || (Array.isArray(vector) && typeof (vector[0] ?? 0) === 'number');
  if (!isObject(item) || !valid) throw badReply('The upstream reply holds an item that is not an embedding.');
  const index = typeof item.index === 'number' && Number.isInteger(item.index) ? item.index : position;
  return { object: 'embedding', index, embedding: vector };
}

const embeddingsPassthrough: Passthrough = {
  upstream: 'openai',
  path: '/embeddings',
  // The caller's body as sent (its `encoding_format` and `dimensions` included), for the engine's model.
  request: (body, { model }) => withoutFallbackModels({ ...body, model }),
  reply(raw, model) {
    if (raw.error !== undefined && raw.error !== null)
      throw new UpstreamError('bad_reply', parseUpstreamError(502, raw));
    if (!Array.isArray(raw.data)) throw badReply('The upstream reply has no embeddings.');
    const reported = usageFromChat(raw.usage);
    const inputTokens = reported.inputTokens ?? 0;
    // Rendered afresh, so a minimal compatible server's reply reaches the caller in OpenAI's full shape.
    const body = {
      object: 'list',
      data: raw.data.map(embeddingItem),
      model,
      usage: { prompt_tokens: inputTokens, total_tokens: inputTokens },
    };
    // Embeddings make no output: only the input (and any reasoning a server reports) is kept.
    return { body, usage: mergeUsage(ZERO_USAGE, { inputTokens, reasoningTokens: reported.reasoningTokens }) };
  },
  stream() {
    throw new Error('Embeddings never stream: their check refuses `stream`.');
  },
};

/** Text inputs counted by the tokenizer, token inputs as the tokens they are (a body its check passed). */
function countInput(body: Readonly<Record<string, unknown>>, countText: (text: string) => number): number {
  const { input } = body;
  if (typeof input === 'string') return countText(input);
  if (!Array.isArray(input)) return 0;
  if (typeof input[0] === 'number') return input.length;
  return input.reduce(
    (sum: number, item: unknown) =>
      sum + (typeof item === 'string' ? countText(item) : Array.isArray(item) ? item.length : 0),
    0,
  );
}

/**
 * The embeddings route's record. It has no neutral chat form: `parse` is reached only when an engine of
 * another dialect than the passthrough's was chosen, which for embeddings means an Anthropic-dialect engine,
 * so it answers the caller's 400; `countInput` counts the input instead.
 */
export const EMBEDDINGS: CallerDialect = {
  name: 'embeddings',
  modelKind: 'embedding',
  outputLimitFields: [],
  nullOutputLimit: false,
  check: (body) => [...checkFallbackModels(body), ...checkEmbeddingsRequest(body)],
  // An embedding produces no tokens: a priced call reserves its input alone.
  requestedOutputLimit: () => 0,
  includeUsage: () => false,
  parse(body) {
    const model = objectOf(body).model;
    throw new DialectRequestError([
      {
        path: 'model',
        code: 'unsupported',
        message:
          `${String(model)} is served by an Anthropic-dialect engine, and the Anthropic dialect has no embeddings; ` +
          'name a model on an OpenAI-compatible endpoint.',
      },
    ]);
  },
  countInput,
  renderReply() {
    throw new Error('Embeddings replies are passed through, never rendered from a chat reply.');
  },
  streamRenderer() {
    throw new Error('Embeddings never stream: their check refuses `stream`.');
  },
  errorBody: (failure, requestId) => renderErrorBody('embeddings', failure, requestId),
  overloadStatus: 503,
  // OpenAI's own embeddings route answers with OpenAI's token-limit headers.
  tokenLimitHeaders: openAiTokenLimitHeaders,
  requestIdHeaders: (requestId) => ({ 'x-request-id': requestId }),
  passthrough: embeddingsPassthrough,
};
