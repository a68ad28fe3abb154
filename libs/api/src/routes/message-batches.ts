import { z } from 'zod';
import { defineRoute, type RouteAuth, type RouteSpec } from '../route';
import { DialectError } from './gateway';

// Anthropic's Message Batches in Anthropic's shapes and error body (docs/batches.md): the official SDK's
// `messages.batches.create`, `list`, `retrieve`, `cancel`, `results` and `delete` call these. Each request is a
// `/v1/messages` call made with the creating key's bounds, so these take `gateway:invoke`, as a model call does.

const TAG = 'Batches';
const AUTH: RouteAuth = { kind: 'scoped', scopes: ['gateway:invoke'] };
/** The body of a create: Anthropic takes up to 256 MB; the edge takes what a model call may send. */
export const MESSAGE_BATCH_MAX_BODY_BYTES = 32 * 1024 * 1024;
export const MAX_MESSAGE_BATCH_REQUESTS = 100_000;

const MessageBatchId = z
  .string()
  .regex(/^msgbatch_[A-Za-z0-9_-]{1,200}$/, 'Expected the id of a message batch (msgbatch_…).')
  .meta({ description: '`msgbatch_…`, as a create returned it.' });

const Time = z.string().nullable().meta({ description: 'RFC 3339.' });

export const MessageBatchObject = z
  .object({
    id: z.string(),
    type: z.literal('message_batch'),
    processing_status: z.enum(['in_progress', 'canceling', 'ended']),
    request_counts: z.object({
      processing: z.number().int(),
      succeeded: z.number().int(),
      errored: z.number().int(),
      canceled: z.number().int(),
      expired: z.number().int(),
    }),
    ended_at: Time,
    created_at: z.string(),
    expires_at: z.string(),
    archived_at: Time,
    cancel_initiated_at: Time,
    results_url: z.string().nullable().meta({ description: 'Set once the batch has ended.' }),
  })
  .loose()
  .meta({ id: 'MessageBatch' });

export const createMessageBatch = defineRoute({
  operationId: 'createMessageBatch',
  method: 'post',
  path: '/v1/messages/batches',
  summary: 'Create a message batch',
  description:
    'Each request’s `params` is a Messages create body; each runs as a `/v1/messages` call with this key’s ' +
    'scopes, models, caps, budgets and routing, billed as that call would be, at low priority.',
  tag: TAG,
  auth: AUTH,
  maxBodyBytes: MESSAGE_BATCH_MAX_BODY_BYTES,
  body: z.object({
    requests: z
      .array(
        z.object({
          custom_id: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, '1 to 64 letters, digits, `_` or `-`.'),
          params: z
            .object({ model: z.string().min(1), max_tokens: z.number().int().min(1), messages: z.array(z.unknown()) })
            .loose(),
        }),
      )
      .min(1)
      .max(MAX_MESSAGE_BATCH_REQUESTS)
      .refine((requests) => new Set(requests.map((request) => request.custom_id)).size === requests.length, {
        message: 'Each custom_id is used once.',
      }),
  }),
  responses: { 200: { description: 'The batch, `in_progress`.', schema: MessageBatchObject } },
  errors: [413],
  errorBody: DialectError,
  rateCost: 5,
});

export const listMessageBatches = defineRoute({
  operationId: 'listMessageBatches',
  method: 'get',
  path: '/v1/messages/batches',
  summary: 'List message batches',
  description: "The account's message batches (a team key: its team's), newest first.",
  tag: TAG,
  auth: AUTH,
  query: z.object({
    limit: z.coerce.number().int().min(1).max(1000).default(20),
    after_id: MessageBatchId.optional(),
    before_id: MessageBatchId.optional(),
  }),
  responses: {
    200: {
      description: 'A page of message batches.',
      schema: z
        .object({
          data: z.array(MessageBatchObject),
          has_more: z.boolean(),
          first_id: z.string().nullable(),
          last_id: z.string().nullable(),
        })
        .loose()
        .meta({ id: 'MessageBatchList' }),
    },
  },
  errorBody: DialectError,
});

const byId = { params: z.object({ message_batch_id: MessageBatchId }) };

export const getMessageBatch = defineRoute({
  operationId: 'getMessageBatch',
  method: 'get',
  path: '/v1/messages/batches/{message_batch_id}',
  summary: 'Get a message batch',
  tag: TAG,
  auth: AUTH,
  ...byId,
  responses: { 200: { description: 'The batch.', schema: MessageBatchObject } },
  errors: [404],
  errorBody: DialectError,
});

export const cancelMessageBatch = defineRoute({
  operationId: 'cancelMessageBatch',
  method: 'post',
  path: '/v1/messages/batches/{message_batch_id}/cancel',
  summary: 'Cancel a message batch',
  description: 'No new request starts; those in flight finish. Ends with the rest `canceled` in its results.',
  tag: TAG,
  auth: AUTH,
  ...byId,
  responses: { 200: { description: 'The batch, `canceling` (or as it ended).', schema: MessageBatchObject } },
  errors: [404],
  errorBody: DialectError,
});

export const getMessageBatchResults = defineRoute({
  operationId: 'getMessageBatchResults',
  method: 'get',
  path: '/v1/messages/batches/{message_batch_id}/results',
  summary: "A message batch's results",
  description:
    'JSONL, one line per request in the order given: `{custom_id, result}` with `result.type` `succeeded` ' +
    '(`message`), `errored` (`error`), `canceled` or `expired`. 409 until the batch has ended.',
  tag: TAG,
  auth: AUTH,
  ...byId,
  responses: { 200: { description: 'The results.', schema: z.string(), contentType: 'application/x-jsonl' } },
  errors: [404, 409],
  errorBody: DialectError,
});

export const deleteMessageBatch = defineRoute({
  operationId: 'deleteMessageBatch',
  method: 'delete',
  path: '/v1/messages/batches/{message_batch_id}',
  summary: 'Delete a message batch',
  description: 'Only an ended batch (cancel one still processing first); 409 otherwise.',
  tag: TAG,
  auth: AUTH,
  ...byId,
  responses: {
    200: {
      description: "Anthropic's deletion object.",
      schema: z
        .object({ id: z.string(), type: z.literal('message_batch_deleted') })
        .loose()
        .meta({ id: 'MessageBatchDeleted' }),
    },
  },
  errors: [404, 409],
  errorBody: DialectError,
});

export const MESSAGE_BATCH_ROUTES: RouteSpec[] = [
  createMessageBatch,
  listMessageBatches,
  getMessageBatch,
  cancelMessageBatch,
  getMessageBatchResults,
  deleteMessageBatch,
];
