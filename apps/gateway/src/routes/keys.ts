import { Router } from 'express';
import { ApiError } from '@sbc/errors';
import type { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import type { RpcClientOf } from '@sbc/rpc';
import { principalOf, type Authorize } from '../auth/authorize';
import { sendResource } from '../http/respond';
import { renderCallerKey } from './caller-key';

export function keyRoutes(deps: { authorize: Authorize; account: RpcClientOf<typeof AccountService> }): Router {
  const router = Router();

  router.get('/v1/keys/whoami', deps.authorize([]), (req, res) => {
    const principal = principalOf(req);
    if (!principal.key) throw new ApiError('invalid_request', 'whoami describes a caller key; this credential is not one.');
    sendResource(req, res, renderCallerKey(principal.key));
  });

  router.delete('/v1/keys/:id', deps.authorize(['keys:write']), async (req, res) => {
    const principal = principalOf(req);
    const reply = await deps.account.revokeKey({ userId: principal.userId, keyId: String(req.params.id) }, { requestId: req.requestId });
    sendResource(req, res, renderCallerKey(reply.key!));
  });

  return router;
}
