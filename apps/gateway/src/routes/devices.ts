import { Router } from 'express';
import type { DeviceService } from '@sbc/proto/sbc/account/v1/devices_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';

export function deviceRoutes(_deps: { authorize: Authorize; devices: RpcClientOf<typeof DeviceService> }): Router {
  return Router();
}
