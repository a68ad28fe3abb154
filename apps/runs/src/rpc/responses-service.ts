import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { ApiError } from '@sbc/errors';
import { MAX_PAGE_LIMIT } from '@sbc/pagination';
import type { ResponsesService } from '@sbc/proto/sbc/runs/v1/responses_pb';
import type { RpcImplementation } from '@sbc/rpc';
import type { PrismaClient as RunsDb } from '../generated/prisma/client';
import { deleteResponse, findResponse, listInputItems, storeResponse, type ResponseBounds } from '../store/responses';

export interface ResponsesServiceDeps {
  db: RunsDb;
  bounds: ResponseBounds;
  now?: () => Date;
}

/** Ids the edge makes (`resp_` and 24 letters and digits); anything else is a caller's mistake, never stored. */
const RESPONSE_ID = /^resp_[A-Za-z0-9_-]{1,200}$/;
/** Owners are accounts (`usr_…`) and teams (`org_…`). */
const OWNER_ID = /^(usr|org)_[A-Za-z0-9_-]{1,64}$/;

function bad(param: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { param, issues: [{ path: param, code: 'invalid_value', message }] });
}

function checked(request: { ownerId: string; responseId: string }): { ownerId: string; responseId: string } {
  if (!OWNER_ID.test(request.ownerId)) throw bad('owner_id', 'owner_id must be an account or team id.');
  if (!RESPONSE_ID.test(request.responseId)) throw bad('response_id', 'response_id must be a resp_ id.');
  return request;
}

/** The runs service's stored Responses (proto/sbc/runs/v1/responses.proto), for the edge. */
export function createResponsesService(deps: ResponsesServiceDeps): RpcImplementation<typeof ResponsesService> {
  const { db, bounds } = deps;
  const now = deps.now ?? (() => new Date());
  return {
    async storeResponse(request) {
      const { ownerId, responseId } = checked(request);
      // The edge wrote both; a cheap look that they are an object and an array keeps a mistake from being stored.
      if (!request.responseJson.startsWith('{')) throw bad('response_json', 'response_json must be a JSON object.');
      if (!request.inputItemsJson.startsWith('['))
        throw bad('input_items_json', 'input_items_json must be a JSON array.');
      const stored = await storeResponse(
        db,
        { ownerId, id: responseId, responseJson: request.responseJson, inputItemsJson: request.inputItemsJson },
        bounds,
        now(),
      );
      return { expiresAt: timestampFromDate(stored.expiresAt), evictedIds: stored.evictedIds };
    },

    async getResponse(request) {
      const { ownerId, responseId } = checked(request);
      const found = await findResponse(db, ownerId, responseId, now(), request.withInputItems);
      return { responseJson: found.responseJson, inputItemsJson: found.inputItemsJson };
    },

    async listInputItems(request) {
      const { ownerId, responseId } = checked(request);
      if (request.limit < 1 || request.limit > MAX_PAGE_LIMIT)
        throw bad('limit', `limit must be 1 to ${MAX_PAGE_LIMIT}.`);
      const page = await listInputItems(db, ownerId, responseId, now(), {
        limit: request.limit,
        ascending: request.ascending,
        after: request.after,
      });
      return { itemsJson: JSON.stringify(page.items), hasMore: page.hasMore };
    },

    async deleteResponse(request) {
      const { ownerId, responseId } = checked(request);
      await deleteResponse(db, ownerId, responseId, now());
      return { responseId };
    },
  };
}
