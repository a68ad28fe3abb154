import { z } from 'zod';
import { ErrorEnvelope, pageQuery } from '../common';
import { defineRoute } from '../route';

// The model routes' full bodies are the dialects' own (OpenAI chat completions and Responses, Anthropic
// Messages); the spec shows only the fields below, and every other field of the dialect is accepted.
const ChatMessage = z.object({ role: z.string(), content: z.unknown() }).loose();

const ChatCompletionRequest = z
  .object({ model: z.string(), messages: z.array(ChatMessage), stream: z.boolean().optional() })
  .loose()
  .meta({ id: 'ChatCompletionRequest', description: 'An OpenAI chat completions request.' });
const ResponsesRequest = z
  .object({
    model: z.string(),
    input: z.union([z.string(), z.array(z.unknown())]),
    stream: z.boolean().optional(),
    store: z
      .boolean()
      .nullable()
      .optional()
      .meta({ description: 'Keep the response for 30 days, to read back and continue (default true, as at OpenAI).' }),
    previous_response_id: z
      .string()
      .optional()
      .meta({ description: "A stored response of this account (a team key: its team's) that this call continues." }),
  })
  .loose()
  .meta({ id: 'ResponsesRequest', description: 'An OpenAI Responses request.' });
const MessagesRequest = z
  .object({
    model: z.string(),
    messages: z.array(ChatMessage),
    max_tokens: z.number().int(),
    stream: z.boolean().optional(),
  })
  .loose()
  .meta({ id: 'MessagesRequest', description: 'An Anthropic Messages request.' });

const EmbeddingRequest = z
  .object({
    model: z.string(),
    input: z.union([z.string(), z.array(z.string()), z.array(z.number().int()), z.array(z.array(z.number().int()))]),
    dimensions: z.number().int().min(1).optional(),
    encoding_format: z.enum(['float', 'base64']).optional(),
    user: z.string().optional(),
  })
  .loose()
  .meta({ id: 'EmbeddingRequest', description: 'An OpenAI embeddings request.' });

const ChatCompletion = z
  .object({ id: z.string(), object: z.literal('chat.completion'), model: z.string(), choices: z.array(z.unknown()) })
  .loose()
  .meta({ id: 'ChatCompletion' });
export const ResponseObject = z
  .object({ id: z.string(), object: z.literal('response'), model: z.string(), output: z.array(z.unknown()) })
  .loose()
  .meta({ id: 'Response' });
const Message = z
  .object({ id: z.string(), type: z.literal('message'), model: z.string(), content: z.array(z.unknown()) })
  .loose()
  .meta({ id: 'Message' });

const EmbeddingList = z
  .object({
    object: z.literal('list'),
    data: z.array(
      z.object({
        object: z.literal('embedding'),
        index: z.number().int(),
        embedding: z.union([z.array(z.number()), z.string()]),
      }),
    ),
    model: z.string(),
    usage: z.object({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }),
  })
  .loose()
  .meta({ id: 'EmbeddingList', description: 'Vectors as floats, or as base64 of little-endian float32s.' });

/** Refusals of the model routes come in the dialect called, except a missing scope (the shared Error). */
export const DialectError = z
  .union([
    z
      .object({
        error: z
          .object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() })
          .loose(),
      })
      .loose(),
    z.object({ type: z.literal('error'), error: z.object({ type: z.string(), message: z.string() }).loose() }).loose(),
    ErrorEnvelope,
  ])
  .meta({
    id: 'DialectError',
    description:
      'OpenAI-style `{error: {message, type, param, code}}` on chat and responses, Anthropic-style `{type: "error", ' +
      'error}` on messages, the shared Error for a missing scope.',
  });

const STREAM = 'With `stream: true`: a server-sent event stream in the dialect called.';
const MODEL_CALL_ERRORS = [402, 404, 413, 429, 502, 503, 504];

export const createChatCompletion = defineRoute({
  operationId: 'createChatCompletion',
  method: 'post',
  path: '/v1/chat/completions',
  summary: 'Create a chat completion',
  tag: 'Gateway',
  auth: { kind: 'scoped', scopes: ['gateway:invoke'] },
  body: ChatCompletionRequest,
  responses: { 200: { description: `The completion. ${STREAM}`, schema: ChatCompletion } },
  errors: MODEL_CALL_ERRORS,
  errorBody: DialectError,
});

export const createResponse = defineRoute({
  operationId: 'createResponse',
  method: 'post',
  path: '/v1/responses',
  summary: 'Create a response',
  description:
    'With `store` (the default) the response is kept for 30 days for the account (a team key: its team) and read ' +
    "back with GET /v1/responses/{response_id}; `previous_response_id` puts a stored response's context (its input " +
    'items and output) before `input`, whichever dialect the model is served in. An unknown, foreign, expired or ' +
    'deleted one is 404 `previous_response_not_found`.',
  tag: 'Gateway',
  auth: { kind: 'scoped', scopes: ['gateway:invoke'] },
  body: ResponsesRequest,
  responses: { 200: { description: `The response. ${STREAM}`, schema: ResponseObject } },
  errors: MODEL_CALL_ERRORS,
  errorBody: DialectError,
});

export const createMessage = defineRoute({
  operationId: 'createMessage',
  method: 'post',
  path: '/v1/messages',
  summary: 'Create a message',
  tag: 'Gateway',
  auth: { kind: 'scoped', scopes: ['gateway:invoke'] },
  body: MessagesRequest,
  responses: { 200: { description: `The message. ${STREAM}`, schema: Message } },
  errors: MODEL_CALL_ERRORS,
  errorBody: DialectError,
});

export const createEmbedding = defineRoute({
  operationId: 'createEmbedding',
  method: 'post',
  path: '/v1/embeddings',
  summary: 'Create embeddings',
  description: 'Embedding models only (`kind: "embedding"` in the model list); an Anthropic-dialect endpoint has none.',
  tag: 'Gateway',
  auth: { kind: 'scoped', scopes: ['gateway:invoke'] },
  body: EmbeddingRequest,
  responses: { 200: { description: 'One vector per input, in input order.', schema: EmbeddingList } },
  errors: MODEL_CALL_ERRORS,
  errorBody: DialectError,
});

export const countMessageTokens = defineRoute({
  operationId: 'countMessageTokens',
  method: 'post',
  path: '/v1/messages/count_tokens',
  summary: 'Estimate input tokens',
  description:
    "Asks the model's first Anthropic-dialect target to count with its own `count_tokens` (the caller's " +
    '`anthropic-beta` values shaped for it as for a model call), else, or when that target cannot count, counts with ' +
    'the o200k tokenizer. `?beta=true` is accepted. `x-sbc-count-source` says which counted.',
  tag: 'Gateway',
  auth: { kind: 'any' },
  body: z
    .object({ model: z.string(), messages: z.array(ChatMessage) })
    .loose()
    .meta({ id: 'CountTokensRequest' }),
  responses: {
    200: {
      description: 'The count.',
      schema: z.object({ input_tokens: z.number().int() }).loose().meta({ id: 'TokenCount' }),
      headers: z.object({
        'x-sbc-count-source': z.enum(['upstream', 'tokenizer']).meta({
          description:
            "`upstream`: the target's own count (exact for that model); `tokenizer`: the gateway's o200k estimate.",
        }),
        'x-sbc-served-by': z
          .string()
          .optional()
          .meta({ description: 'With `upstream`: the target that counted (`house`, `byo:<slug>`, `provider:…`).' }),
      }),
    },
  },
  errors: [404, 413, 502, 504],
  errorBody: DialectError,
});

export const Model = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    created: z.number().int(),
    owned_by: z.string(),
    lane: z.string().optional(),
    tier: z.string().optional(),
    available: z.boolean().optional(),
    reason: z.string().optional(),
    min_plan: z.string().optional(),
    auto: z.boolean().optional(),
    context_window: z.number().int().optional(),
    context_length: z.number().int().optional(),
    kind: z.enum(['chat', 'embedding']).optional(),
    dimensions: z.number().int().optional(),
  })
  .loose()
  .meta({
    id: 'Model',
    description:
      "The spec's Model, with Anthropic's ModelInfo fields (type, display_name, created_at) so both SDKs can list.",
  });

export const listModels = defineRoute({
  operationId: 'listModels',
  method: 'get',
  path: '/v1/models',
  summary: 'List model ids the key can name',
  description:
    'Without `limit`, every model in one page (OpenAI clients do not page); with it, `after_id` and `before_id` page ' +
    'in list order.',
  tag: 'Gateway',
  auth: { kind: 'any' },
  query: pageQuery(),
  responses: {
    200: {
      description: 'House models, own aliases, own endpoints, then the catalog.',
      schema: z
        .object({
          object: z.literal('list'),
          data: z.array(Model),
          has_more: z.boolean(),
          first_id: z.string().nullable(),
          last_id: z.string().nullable(),
        })
        .loose()
        .meta({ id: 'ModelList' }),
    },
  },
});

export const getModel = defineRoute({
  operationId: 'getModel',
  method: 'get',
  path: '/v1/models/{model}',
  summary: 'Get one model the key can name',
  tag: 'Gateway',
  auth: { kind: 'any' },
  params: z.object({ model: z.string().meta({ description: 'The model id; may contain "/" (`<slug>/<model>`).' }) }),
  responses: { 200: { description: 'The model.', schema: Model } },
  errors: [404],
});

export const GATEWAY_ROUTES = [
  createChatCompletion,
  createResponse,
  createMessage,
  createEmbedding,
  countMessageTokens,
  listModels,
  getModel,
];
