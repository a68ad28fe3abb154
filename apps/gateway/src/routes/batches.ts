import { Router } from 'express';
import { batchRoutes as specs } from '@sbc/api';
import { callerDialect } from '@sbc/dialects';
import type { Logger } from '@sbc/logging';
import { listEnvelope } from '@sbc/pagination';
import type { BatchesService } from '@sbc/proto/sbc/runs/v1/batches_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import { refuseInDialect } from '../http/dialect-refusals';
import { refuseHostileUrl } from '../http/hostile-input';
import { mount } from '../http/mount';
import { ownerOf } from '../responses-state/responses-state';
import { runCaller } from './runs/render';

export interface BatchRoutesDeps {
  authorize: Authorize;
  /** The runs service's batches. */
  batches: RpcClientOf<typeof BatchesService>;
  baseUrl: string;
  logger: Logger;
}

const OPENAI = callerDialect('chat');

/**
 * OpenAI's Batch API (libs/api routes/batches.ts) over the runs service, for the account or, with a team key, its
 * team. The batch keeps the creating key's bounds: its lines are called with a key minted within them.
 */
export function batchRoutes(deps: BatchRoutesDeps): Router {
  const router = Router();
  const { batches } = deps;
  router.use('/v1/batches', refuseHostileUrl());

  mount(router, specs.createBatch, deps.authorize, async ({ body, principal, requestId }) => {
    const created = await batches.createBatch(
      {
        ownerId: ownerOf(principal),
        caller: runCaller(principal.userId, principal.key, principal.operator),
        inputFileId: body.input_file_id,
        endpoint: body.endpoint,
        completionWindow: body.completion_window,
        metadataJson: body.metadata ? JSON.stringify(body.metadata) : '',
      },
      { requestId },
    );
    return { status: 200, body: JSON.parse(created.batchJson) as unknown };
  });

  mount(router, specs.listBatches, deps.authorize, async ({ query, principal, requestId }) => {
    const page = await batches.listBatches(
      { ownerId: ownerOf(principal), limit: query.limit, after: query.after },
      { requestId },
    );
    const data = JSON.parse(page.batchesJson) as Array<{ id: string }>;
    return { status: 200, body: listEnvelope(data, page.hasMore, (batch) => batch.id) };
  });

  mount(router, specs.getBatch, deps.authorize, async ({ params, principal, requestId }) => {
    const found = await batches.getBatch({ ownerId: ownerOf(principal), batchId: params.batch_id }, { requestId });
    return { status: 200, body: JSON.parse(found.batchJson) as unknown };
  });

  mount(router, specs.cancelBatch, deps.authorize, async ({ params, principal, requestId }) => {
    const found = await batches.cancelBatch({ ownerId: ownerOf(principal), batchId: params.batch_id }, { requestId });
    return { status: 200, body: JSON.parse(found.batchJson) as unknown };
  });

  router.use(refuseInDialect(OPENAI, deps));
  return router;
}
