import { ApiError } from '@sbc/errors';
import { MAX_PAGE_LIMIT } from '@sbc/pagination';
import type { BatchesService } from '@sbc/proto/sbc/runs/v1/batches_pb';
import type { RpcImplementation } from '@sbc/rpc';
import type { PrismaClient as RunsDb } from '../generated/prisma/client';
import {
  batchObject,
  cancelBatch,
  createBatch,
  createMessageBatch,
  deleteMessageBatch,
  findBatch,
  findBatchOf,
  listBatches,
  listMessageBatches,
  messageBatchObject,
  messageBatchResults,
} from '../store/batches';
import { callerJson } from './runs-service';

export interface BatchesServiceDeps {
  db: RunsDb;
  /** Told when a batch was queued, so an idle lane looks at once. */
  onQueued?: () => void;
  now?: () => Date;
}

const BATCH_ID = /^batch_[A-Za-z0-9_-]{1,200}$/;
const MESSAGE_BATCH_ID = /^msgbatch_[A-Za-z0-9_-]{1,200}$/;
/** Anthropic's bound on the requests of one message batch. */
const MAX_MESSAGE_BATCH_REQUESTS = 100_000;
const MAX_MESSAGE_BATCH_PAGE = 1000;
const OWNER_ID = /^(usr|org)_[A-Za-z0-9_-]{1,64}$/;
/** OpenAI's metadata: at most 16 pairs, keys up to 64 characters, values up to 512. */
const MAX_METADATA_PAIRS = 16;

function bad(param: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { param, issues: [{ path: param, code: 'invalid_value', message }] });
}

function checked(request: { ownerId: string; batchId: string }): { ownerId: string; batchId: string } {
  if (!OWNER_ID.test(request.ownerId)) throw bad('owner_id', 'owner_id must be an account or team id.');
  if (!BATCH_ID.test(request.batchId)) throw bad('batch_id', 'batch_id must be a batch_ id.');
  return request;
}

function checkedMessage(request: { ownerId: string; batchId: string }): { ownerId: string; batchId: string } {
  if (!OWNER_ID.test(request.ownerId)) throw bad('owner_id', 'owner_id must be an account or team id.');
  if (!MESSAGE_BATCH_ID.test(request.batchId)) throw bad('batch_id', 'batch_id must be a msgbatch_ id.');
  return request;
}

/** The edge checked each request's shape; this keeps a mistake in the edge from queueing junk. */
function requestsOf(json: string): Array<{ custom_id: string; params: unknown }> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw bad('requests', 'requests must be a JSON array.');
  }
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_MESSAGE_BATCH_REQUESTS)
    throw bad('requests', `requests must hold 1 to ${MAX_MESSAGE_BATCH_REQUESTS} requests.`);
  const seen = new Set<string>();
  for (const [index, item] of (value as Array<Record<string, unknown>>).entries()) {
    const customId = item?.custom_id;
    if (typeof customId !== 'string' || typeof item.params !== 'object' || item.params === null)
      throw bad(`requests.${index}`, 'Each request has a custom_id and params.');
    if (seen.has(customId)) throw bad(`requests.${index}.custom_id`, `custom_id '${customId}' is used twice.`);
    seen.add(customId);
  }
  return value as Array<{ custom_id: string; params: unknown }>;
}

function metadataOf(json: string): Record<string, string> | null {
  if (json === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw bad('metadata', 'metadata must be a JSON object.');
  }
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw bad('metadata', 'metadata must be an object.');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_METADATA_PAIRS) throw bad('metadata', `metadata holds at most ${MAX_METADATA_PAIRS} pairs.`);
  for (const [key, item] of entries)
    if (key.length > 64 || typeof item !== 'string' || item.length > 512)
      throw bad('metadata', 'metadata keys are up to 64 characters and values strings up to 512.');
  return value as Record<string, string>;
}

/** The runs service's OpenAI batches (proto/sbc/runs/v1/batches.proto), for the edge. */
export function createBatchesService(deps: BatchesServiceDeps): RpcImplementation<typeof BatchesService> {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());
  return {
    async createBatch(request) {
      if (!OWNER_ID.test(request.ownerId)) throw bad('owner_id', 'owner_id must be an account or team id.');
      if (!/^file-[A-Za-z0-9_-]{1,200}$/.test(request.inputFileId))
        throw bad('input_file_id', 'input_file_id must be a file- id.');
      const row = await createBatch(
        db,
        {
          ownerId: request.ownerId,
          caller: callerJson(request.caller),
          inputFileId: request.inputFileId,
          endpoint: request.endpoint,
          completionWindow: request.completionWindow,
          metadata: metadataOf(request.metadataJson),
        },
        now(),
      );
      deps.onQueued?.();
      return { batchJson: JSON.stringify(batchObject(row)) };
    },

    async getBatch(request) {
      const { ownerId, batchId } = checked(request);
      return { batchJson: JSON.stringify(batchObject(await findBatch(db, ownerId, batchId))) };
    },

    async listBatches(request) {
      if (!OWNER_ID.test(request.ownerId)) throw bad('owner_id', 'owner_id must be an account or team id.');
      if (request.limit < 1 || request.limit > MAX_PAGE_LIMIT)
        throw bad('limit', `limit must be 1 to ${MAX_PAGE_LIMIT}.`);
      const page = await listBatches(db, request.ownerId, { limit: request.limit, after: request.after });
      return { batchesJson: JSON.stringify(page.rows.map(batchObject)), hasMore: page.hasMore };
    },

    async cancelBatch(request) {
      const { ownerId, batchId } = checked(request);
      const row = await cancelBatch(db, ownerId, batchId, now());
      deps.onQueued?.();
      return { batchJson: JSON.stringify(batchObject(row)) };
    },

    async createMessageBatch(request) {
      if (!OWNER_ID.test(request.ownerId)) throw bad('owner_id', 'owner_id must be an account or team id.');
      const row = await createMessageBatch(
        db,
        { ownerId: request.ownerId, caller: callerJson(request.caller), requests: requestsOf(request.requestsJson) },
        now(),
      );
      deps.onQueued?.();
      return { batchJson: JSON.stringify(messageBatchObject(row)) };
    },

    async getMessageBatch(request) {
      const { ownerId, batchId } = checkedMessage(request);
      return { batchJson: JSON.stringify(messageBatchObject(await findBatchOf(db, ownerId, batchId, true))) };
    },

    async listMessageBatches(request) {
      if (!OWNER_ID.test(request.ownerId)) throw bad('owner_id', 'owner_id must be an account or team id.');
      if (request.limit < 1 || request.limit > MAX_MESSAGE_BATCH_PAGE)
        throw bad('limit', `limit must be 1 to ${MAX_MESSAGE_BATCH_PAGE}.`);
      if (request.afterId !== undefined && request.beforeId !== undefined)
        throw bad('before_id', 'Pass after_id or before_id, not both.');
      const page = await listMessageBatches(db, request.ownerId, {
        limit: request.limit,
        afterId: request.afterId,
        beforeId: request.beforeId,
      });
      return { batchesJson: JSON.stringify(page.rows.map(messageBatchObject)), hasMore: page.hasMore };
    },

    async cancelMessageBatch(request) {
      const { ownerId, batchId } = checkedMessage(request);
      const row = await cancelBatch(db, ownerId, batchId, now(), true);
      deps.onQueued?.();
      return { batchJson: JSON.stringify(messageBatchObject(row)) };
    },

    async *readMessageBatchResults(request) {
      const { ownerId, batchId } = checkedMessage(request);
      for await (const lines of messageBatchResults(db, ownerId, batchId)) yield { lines };
    },

    async deleteMessageBatch(request) {
      const { ownerId, batchId } = checkedMessage(request);
      await deleteMessageBatch(db, ownerId, batchId);
      return { batchId };
    },
  };
}
