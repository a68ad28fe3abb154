import { Router } from 'express';
import { serviceRoutes } from '@sbc/api';
import { ApiError } from '@sbc/errors';
import { learnShippedDocuments } from '@sbc/service-docs';
import type { Authorize } from '../auth/authorize';
import { mount } from '../http/mount';

/**
 * `GET /docs/services/{service_id}.json`: a shipped service's learned OpenAPI document. The documents are
 * pure functions of the observations shipped in the repo, so they are learned and serialised once here.
 * The handler writes the body itself: the document is served as learned, without the `request_id` that
 * account-surface bodies carry (OpenAPI allows no such top-level field).
 */
export function serviceDocRoutes(deps: { authorize: Authorize }): Router {
  const documents = new Map([...learnShippedDocuments()].map(([id, document]) => [id, JSON.stringify(document)]));
  const router = Router();
  mount(router, serviceRoutes.getServiceDocument, deps.authorize, async ({ params, res }) => {
    const document = documents.get(params.service_id);
    if (document === undefined)
      throw new ApiError('not_found', 'There is no shipped service with this id.', { param: 'service_id' });
    res.type('application/json').send(document);
  });
  return router;
}
