import { Router } from 'express';
import type { UsageLedgerService } from '@sbc/proto/sbc/usage/v1/ledger_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';

export interface UsageRoutesDeps {
  authorize: Authorize;
  ledger: RpcClientOf<typeof UsageLedgerService>;
}

/** Usage reports, credits and spend, answered by the usage ledger. */
export function usageRoutes(_deps: UsageRoutesDeps): Router {
  return Router();
}
