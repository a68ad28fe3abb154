import { Router } from 'express';
import { messageBatchRoutes as specs } from '@sbc/api';
import { callerDialect } from '@sbc/dialects';
import type { Logger } from '@sbc/logging';
import type { BatchesService } from '@sbc/proto/sbc/runs/v1/batches_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import { refuseInDialect } from '../http/dialect-refusals';
import { refuseHostileUrl } from '../http/hostile-input';
import { mount } from '../http/mount';
import { ownerOf } from '../responses-state/responses-state';
import { runCaller } from './runs/render';

export interface MessageBatchRoutesDeps {
  authorize: Authorize;
  /** The runs service's batches. */
  batches: RpcClientOf<typeof BatchesService>;
  baseUrl: string;
  logger: Logger;
}

const MESSAGES = callerDialect('messages');
/** A results download streams for as long as the caller reads, within this. */
const RESULTS_DEADLINE_MS = 30 * 60_000;

/**
 * Anthropic's Message Batches (libs/api routes/message-batches.ts) over the runs service, for the account or,
 * with a team key, its team; refusals in Anthropic's error body, as a Messages call's.
 */
export function messageBatchRoutes(deps: MessageBatchRoutesDeps): Router {
  const router = Router();
  const { batches } = deps;
  router.use('/v1/messages/batches', refuseHostileUrl());

  /** The service renders `results_url` as the path; callers fetch it on this edge's public URL. */
  const shown = (json: string) => {
    const batch = JSON.parse(json) as { results_url: string | null };
    return { ...batch, results_url: batch.results_url && `${deps.baseUrl}${batch.results_url}` };
  };

  mount(router, specs.createMessageBatch, deps.authorize, async ({ body, principal, requestId }) => {
    const created = await batches.createMessageBatch(
      {
        ownerId: ownerOf(principal),
        caller: runCaller(principal.userId, principal.key, principal.operator),
        requestsJson: JSON.stringify(body.requests),
      },
      { requestId },
    );
    return { status: 200, body: shown(created.batchJson) };
  });

  mount(router, specs.listMessageBatches, deps.authorize, async ({ query, principal, requestId }) => {
    const page = await batches.listMessageBatches(
      { ownerId: ownerOf(principal), limit: query.limit, afterId: query.after_id, beforeId: query.before_id },
      { requestId },
    );
    const data = (JSON.parse(page.batchesJson) as unknown[]).map((batch) => shown(JSON.stringify(batch)));
    const ids = data.map((batch) => (batch as unknown as { id: string }).id);
    return {
      status: 200,
      body: { data, has_more: page.hasMore, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null },
    };
  });

  mount(router, specs.getMessageBatch, deps.authorize, async ({ params, principal, requestId }) => {
    const found = await batches.getMessageBatch(
      { ownerId: ownerOf(principal), batchId: params.message_batch_id },
      { requestId },
    );
    return { status: 200, body: shown(found.batchJson) };
  });

  mount(router, specs.cancelMessageBatch, deps.authorize, async ({ params, principal, requestId }) => {
    const found = await batches.cancelMessageBatch(
      { ownerId: ownerOf(principal), batchId: params.message_batch_id },
      { requestId },
    );
    return { status: 200, body: shown(found.batchJson) };
  });

  mount(router, specs.getMessageBatchResults, deps.authorize, async ({ params, principal, requestId, req, res }) => {
    const abort = new AbortController();
    req.on('close', () => abort.abort());
    const stream = batches
      .readMessageBatchResults(
        { ownerId: ownerOf(principal), batchId: params.message_batch_id },
        { requestId, deadlineMs: RESULTS_DEADLINE_MS, signal: abort.signal },
      )
      [Symbol.asyncIterator]();
    // The first page before the headers, so a batch not found or not ended is refused in Anthropic's shape.
    let next = await stream.next();
    res.status(200).type('application/x-jsonl');
    while (!next.done) {
      if (!res.write(next.value.lines))
        await new Promise((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
      next = await stream.next();
    }
    res.end();
  });

  mount(router, specs.deleteMessageBatch, deps.authorize, async ({ params, principal, requestId }) => {
    await batches.deleteMessageBatch({ ownerId: ownerOf(principal), batchId: params.message_batch_id }, { requestId });
    return { status: 200, body: { id: params.message_batch_id, type: 'message_batch_deleted' } };
  });

  router.use(refuseInDialect(MESSAGES, deps));
  return router;
}
