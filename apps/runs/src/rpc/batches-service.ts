import { ApiError } from '@sbc/errors';
import { MAX_PAGE_LIMIT } from '@sbc/pagination';
import type { BatchesService } from '@sbc/proto/sbc/runs/v1/batches_pb';
import type { RpcImplementation } from '@sbc/rpc';
import type { PrismaClient as RunsDb } from '../generated/prisma/client';
import { batchObject, cancelBatch, createBatch, findBatch, listBatches } from '../store/batches';
import { callerJson } from './runs-service';

export interface BatchesServiceDeps {
  db: RunsDb;
  /** Told when a batch was queued, so an idle lane looks at once. */
  onQueued?: () => void;
  now?: () => Date;
}

const BATCH_ID = /^batch_[A-Za-z0-9_-]{1,200}$/;
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
  };
}
