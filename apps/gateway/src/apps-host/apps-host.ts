import type { IncomingMessage, ServerResponse } from 'node:http';
import type { XBuildsService } from '@sbc/proto/sbc/xbuilds/v1/xbuilds_pb';
import type { RpcClientOf } from '@sbc/rpc';

export interface AppsHostDeps {
  /** Published apps are served for `Host: <slug>.<appsDomain>`. */
  appsDomain: string;
  xbuilds: RpcClientOf<typeof XBuildsService>;
}

export interface AppsHost {
  /** True when the request is for the apps host (and has been answered); false leaves it to the API. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

/** Serves published X builds apps by Host header. */
export function createAppsHost(_deps: AppsHostDeps): AppsHost {
  return { handle: () => false };
}
