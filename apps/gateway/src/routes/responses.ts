import { Router } from 'express';
import { responseRoutes as specs } from '@sbc/api';
import { callerDialect } from '@sbc/dialects';
import type { Logger } from '@sbc/logging';
import { listEnvelope } from '@sbc/pagination';
import type { ResponsesService } from '@sbc/proto/sbc/runs/v1/responses_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import { refuseInDialect } from '../http/dialect-refusals';
import { refuseHostileUrl } from '../http/hostile-input';
import { mount } from '../http/mount';
import { ownerOf } from '../responses-state/responses-state';

export interface ResponseRoutesDeps {
  authorize: Authorize;
  /** The runs service's stored responses. */
  responses: RpcClientOf<typeof ResponsesService>;
  baseUrl: string;
  logger: Logger;
}

const RESPONSES = callerDialect('responses');

/**
 * Stored OpenAI Responses read back and deleted (libs/api routes/responses.ts), for the account or, with a team
 * key, its team. These are Responses routes, so their refusals are in OpenAI's error shape like a create's
 * (a missing scope in the shared envelope, as on every model route).
 */
export function responseRoutes(deps: ResponseRoutesDeps): Router {
  const router = Router();
  const { responses } = deps;
  // The edge's check of a URL's text, here so that its refusal too is in OpenAI's shape (this router comes first).
  router.use('/v1/responses', refuseHostileUrl());

  mount(router, specs.getResponse, deps.authorize, async ({ params, principal, requestId, res }) => {
    const found = await responses.getResponse(
      { ownerId: ownerOf(principal), responseId: params.response_id },
      { requestId },
    );
    // The object as its caller received it, sent as it was stored.
    res.status(200).type('application/json').send(found.responseJson);
  });

  mount(router, specs.listResponseInputItems, deps.authorize, async ({ params, query, principal, requestId }) => {
    const page = await responses.listInputItems(
      {
        ownerId: ownerOf(principal),
        responseId: params.response_id,
        limit: query.limit,
        ascending: query.order === 'asc',
        after: query.after,
      },
      { requestId },
    );
    const items = JSON.parse(page.itemsJson) as Array<{ id: string }>;
    return { status: 200, body: listEnvelope(items, page.hasMore, (item) => item.id) };
  });

  mount(router, specs.deleteResponse, deps.authorize, async ({ params, principal, requestId }) => {
    await responses.deleteResponse({ ownerId: ownerOf(principal), responseId: params.response_id }, { requestId });
    return { status: 200, body: { id: params.response_id, object: 'response', deleted: true } };
  });

  router.use(refuseInDialect(RESPONSES, deps));
  return router;
}
