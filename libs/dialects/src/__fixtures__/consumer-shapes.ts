import { z } from 'zod';

/**
 * What the strictest clients in wide use accept, written from the documented shapes (dialects.md §2.3, §2.4,
 * §3.3, §3.4, §4.3, §4.4 and OpenAI's published schema): a field a provider leaves out is optional but never
 * null, and a field it always sends is required. Unknown fields pass, as they do in those clients, except
 * where a client is known to refuse them. Used by the reply-shape tests to catch a translation that the
 * official SDKs tolerate and a stricter consumer would not.
 */

const int = z.number().int().nonnegative();
const toolId = z.string().regex(/^[a-zA-Z0-9_-]+$/);

// ---------------------------------------------------------------------------------------------------------
// Anthropic Messages

const messagesUsage = z.object({
  input_tokens: int,
  output_tokens: int,
  cache_creation_input_tokens: int.nullable().optional(),
  cache_read_input_tokens: int.nullable().optional(),
  service_tier: z.enum(['standard', 'priority', 'batch']).optional(),
});

const messagesBlock = z.discriminatedUnion('type', [
  // `citations` is absent or a list; a null here is what made `@ai-sdk/anthropic` refuse whole replies.
  z.object({ type: z.literal('text'), text: z.string(), citations: z.array(z.unknown()).optional() }),
  z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }),
  z.object({ type: z.literal('redacted_thinking'), data: z.string() }),
  z.object({
    type: z.literal('tool_use'),
    id: toolId,
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
  }),
]);

const stopReason = z.enum([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
]);

export const messagesReply = z.object({
  id: z.string().startsWith('msg_'),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string().min(1),
  content: z.array(messagesBlock),
  stop_reason: stopReason,
  stop_sequence: z.string().nullable(),
  usage: messagesUsage,
});

export const messagesEvent = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message_start'),
    message: messagesReply.extend({ content: z.array(messagesBlock).length(0), stop_reason: z.null() }),
  }),
  z.object({
    type: z.literal('content_block_start'),
    index: int,
    content_block: z.discriminatedUnion('type', [
      z.object({ type: z.literal('text'), text: z.literal(''), citations: z.array(z.unknown()).optional() }),
      z.object({ type: z.literal('thinking'), thinking: z.literal(''), signature: z.string() }),
      z.object({ type: z.literal('redacted_thinking'), data: z.string() }),
      z.object({ type: z.literal('tool_use'), id: toolId, name: z.string().min(1), input: z.object({}).strict() }),
    ]),
  }),
  z.object({
    type: z.literal('content_block_delta'),
    index: int,
    delta: z.discriminatedUnion('type', [
      z.object({ type: z.literal('text_delta'), text: z.string() }),
      z.object({ type: z.literal('input_json_delta'), partial_json: z.string() }),
      z.object({ type: z.literal('thinking_delta'), thinking: z.string() }),
      z.object({ type: z.literal('signature_delta'), signature: z.string() }),
    ]),
  }),
  z.object({ type: z.literal('content_block_stop'), index: int }),
  z.object({
    type: z.literal('message_delta'),
    delta: z.object({ stop_reason: stopReason, stop_sequence: z.string().nullable() }),
    usage: z.object({ output_tokens: int }),
  }),
  z.object({ type: z.literal('message_stop') }),
  z.object({ type: z.literal('ping') }),
  z.object({ type: z.literal('error'), error: z.object({ type: z.string(), message: z.string() }) }),
]);

// ---------------------------------------------------------------------------------------------------------
// OpenAI Chat Completions

const finishReason = z.enum(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']);

const chatUsage = z.object({
  prompt_tokens: int,
  completion_tokens: int,
  total_tokens: int,
  prompt_tokens_details: z.object({ cached_tokens: int }).optional(),
  completion_tokens_details: z.object({ reasoning_tokens: int }).optional(),
});

export const chatReply = z.object({
  id: z.string().startsWith('chatcmpl-'),
  object: z.literal('chat.completion'),
  created: int,
  model: z.string().min(1),
  choices: z
    .array(
      z.object({
        index: int,
        message: z.object({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          refusal: z.string().nullable(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().min(1),
                type: z.literal('function'),
                function: z.object({ name: z.string().min(1), arguments: z.string() }),
              }),
            )
            .min(1)
            .optional(),
          annotations: z.array(z.unknown()).optional(),
        }),
        logprobs: z.object({}).passthrough().nullable(),
        finish_reason: finishReason,
      }),
    )
    .length(1),
  usage: chatUsage,
});

export const chatChunk = z.object({
  id: z.string().startsWith('chatcmpl-'),
  object: z.literal('chat.completion.chunk'),
  created: int,
  model: z.string().min(1),
  choices: z.array(
    z.object({
      index: int,
      delta: z.object({
        role: z.literal('assistant').optional(),
        content: z.string().nullable().optional(),
        refusal: z.string().nullable().optional(),
        tool_calls: z
          .array(
            z.object({
              index: int,
              id: z.string().min(1).optional(),
              type: z.literal('function').optional(),
              function: z.object({ name: z.string().optional(), arguments: z.string().optional() }),
            }),
          )
          .optional(),
      }),
      logprobs: z.object({}).passthrough().nullable().optional(),
      finish_reason: finishReason.nullable(),
    }),
  ),
  usage: chatUsage.nullable().optional(),
});

// ---------------------------------------------------------------------------------------------------------
// OpenAI Responses

const outputItem = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message'),
    id: z.string().startsWith('msg_'),
    status: z.enum(['in_progress', 'completed', 'incomplete']),
    role: z.literal('assistant'),
    content: z.array(
      z.discriminatedUnion('type', [
        z.object({
          type: z.literal('output_text'),
          text: z.string(),
          annotations: z.array(z.unknown()),
          logprobs: z.array(z.unknown()),
        }),
        z.object({ type: z.literal('refusal'), refusal: z.string() }),
      ]),
    ),
  }),
  z.object({
    type: z.literal('function_call'),
    id: z.string().startsWith('fc_'),
    call_id: z.string().min(1),
    name: z.string().min(1),
    arguments: z.string(),
    status: z.enum(['in_progress', 'completed', 'incomplete']),
  }),
  z.object({
    type: z.literal('reasoning'),
    id: z.string().startsWith('rs_'),
    summary: z.array(z.object({ type: z.literal('summary_text'), text: z.string() })),
    encrypted_content: z.string().nullable().optional(),
  }),
]);

export const responsesReply = z.object({
  id: z.string().startsWith('resp_'),
  object: z.literal('response'),
  created_at: int,
  status: z.enum(['completed', 'failed', 'in_progress', 'cancelled', 'queued', 'incomplete']),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  incomplete_details: z.object({ reason: z.enum(['max_output_tokens', 'content_filter']) }).nullable(),
  instructions: z.unknown(),
  model: z.string().min(1),
  output: z.array(outputItem),
  parallel_tool_calls: z.boolean(),
  metadata: z.record(z.string(), z.string()),
  tools: z.array(z.unknown()),
  tool_choice: z.unknown(),
  temperature: z.number().nullable(),
  top_p: z.number().nullable(),
  // A string or absent in OpenAI's schema, never null.
  user: z.string().optional(),
  usage: z
    .object({
      input_tokens: int,
      input_tokens_details: z.object({ cached_tokens: int, cache_write_tokens: int }),
      output_tokens: int,
      output_tokens_details: z.object({ reasoning_tokens: int }),
      total_tokens: int,
    })
    .nullable(),
});

/** Every Responses event carries its type and a sequence number; lifecycle events carry the whole response. */
export const responsesEvent = z
  .object({
    type: z.string().startsWith('response.').or(z.literal('error')),
    sequence_number: int,
    response: responsesReply.optional(),
    item: outputItem.optional(),
  })
  .refine(
    (event) =>
      !/^response\.(created|in_progress|completed|incomplete|failed)$/.test(event.type) || event.response !== undefined,
    'lifecycle event without its response',
  );

/** The issues zod found, as short path: message lines, so a failing test says what broke. */
// ---------------------------------------------------------------------------------------------------------
// OpenAI Embeddings

/**
 * OpenAI's CreateEmbeddingResponse and Embedding (its OpenAPI document: every field required, `object` constants).
 * The document types `embedding` as floats only; with `encoding_format: "base64"` the API and its SDKs carry
 * the base64 text of little-endian float32s in the same field.
 */
export const embeddingsReply = z.object({
  object: z.literal('list'),
  data: z.array(
    z.object({
      object: z.literal('embedding'),
      index: int,
      embedding: z.union([z.array(z.number()), z.string().base64()]),
    }),
  ),
  model: z.string().min(1),
  usage: z.object({ prompt_tokens: int, total_tokens: int }),
});

export function shapeIssues(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}
