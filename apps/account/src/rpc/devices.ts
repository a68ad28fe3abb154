import type { DeviceService } from '@sbc/proto/sbc/account/v1/devices_pb';
import type { RpcImplementation } from '@sbc/rpc';
import type { AccountServiceDeps } from './account-service';

export function createDeviceService(_deps: AccountServiceDeps): RpcImplementation<typeof DeviceService> {
  return {};
}
