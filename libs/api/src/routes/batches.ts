import { z } from 'zod';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '@sbc/pagination';
import { defineRoute, type RouteAuth, type RouteSpec } from '../route';
import { FileId } from './files';
import { DialectError } from './gateway';

// OpenAI batches in OpenAI's shapes and error body (docs/batches.md): the official SDK's `batches.create`,
// `batches.list`, `batches.retrieve` and `batches.cancel` call these. Each line is a model call made with the
// creating key's bounds, so these take `gateway:invoke`, as a model call does.

const TAG = 'Batches';
const AUTH: RouteAuth = { kind: 'scoped', scopes: ['gateway:invoke'] };

const BatchId = z
  .string()
  .regex(/^batch_[A-Za-z0-9_-]{1,200}$/, 'Expected the id of a batch (batch_…).')
  .meta({ description: '`batch_…`, as a create returned it.' });

const Seconds = z.number().int().nullable();

export const BatchObject = z
  .object({
    id: z.string(),
    object: z.literal('batch'),
    endpoint: z.string(),
    errors: z.unknown().nullable(),
    input_file_id: z.string(),
    completion_window: z.string(),
    status: z.enum([
      'validating',
      'failed',
      'in_progress',
      'finalizing',
      'completed',
      'expired',
      'cancelling',
      'cancelled',
    ]),
    output_file_id: z.string().nullable(),
    error_file_id: z.string().nullable(),
    created_at: z.number().int(),
    in_progress_at: Seconds,
    expires_at: Seconds,
    finalizing_at: Seconds,
    completed_at: Seconds,
    failed_at: Seconds,
    expired_at: Seconds,
    cancelling_at: Seconds,
    cancelled_at: Seconds,
    request_counts: z.object({ total: z.number().int(), completed: z.number().int(), failed: z.number().int() }),
    metadata: z.record(z.string(), z.string()).nullable(),
  })
  .loose()
  .meta({ id: 'Batch' });

export const createBatch = defineRoute({
  operationId: 'createBatch',
  method: 'post',
  path: '/v1/batches',
  summary: 'Create a batch',
  description:
    'Queues every line of an uploaded `batch` file; each runs as a model call with this key’s scopes, models, ' +
    'caps, budgets and routing, billed as that call would be, at low priority. Every line’s `url` must be the ' +
    'batch’s `endpoint`.',
  tag: TAG,
  auth: AUTH,
  body: z.object({
    input_file_id: FileId,
    endpoint: z.enum(['/v1/chat/completions', '/v1/responses', '/v1/embeddings']),
    completion_window: z.literal('24h'),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .nullable()
      .optional()
      .meta({ description: 'Up to 16 pairs.' }),
  }),
  responses: { 200: { description: 'The batch, `validating`.', schema: BatchObject } },
  errors: [404],
  errorBody: DialectError,
  rateCost: 5,
});

export const listBatches = defineRoute({
  operationId: 'listBatches',
  method: 'get',
  path: '/v1/batches',
  summary: 'List batches',
  description: "The account's batches (a team key: its team's), newest first.",
  tag: TAG,
  auth: AUTH,
  query: z.object({
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT),
    after: BatchId.optional().meta({ description: 'A batch id: the page starts after it.' }),
  }),
  responses: {
    200: {
      description: 'A page of batches.',
      schema: z
        .object({
          object: z.literal('list'),
          data: z.array(BatchObject),
          has_more: z.boolean(),
          first_id: z.string().nullable(),
          last_id: z.string().nullable(),
        })
        .loose()
        .meta({ id: 'BatchList' }),
    },
  },
  errorBody: DialectError,
});

export const getBatch = defineRoute({
  operationId: 'getBatch',
  method: 'get',
  path: '/v1/batches/{batch_id}',
  summary: 'Get a batch',
  description: "Its status and request counts; another account's batch is 404, as an unknown one.",
  tag: TAG,
  auth: AUTH,
  params: z.object({ batch_id: BatchId }),
  responses: { 200: { description: 'The batch.', schema: BatchObject } },
  errors: [404],
  errorBody: DialectError,
});

export const cancelBatch = defineRoute({
  operationId: 'cancelBatch',
  method: 'post',
  path: '/v1/batches/{batch_id}/cancel',
  summary: 'Cancel a batch',
  description:
    'No new line starts; lines in flight finish, then the batch is `cancelled` with what was done in its files.',
  tag: TAG,
  auth: AUTH,
  params: z.object({ batch_id: BatchId }),
  responses: { 200: { description: 'The batch, `cancelling` (or as it ended).', schema: BatchObject } },
  errors: [404],
  errorBody: DialectError,
});

export const BATCH_ROUTES: RouteSpec[] = [createBatch, listBatches, getBatch, cancelBatch];
