import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Logger } from '@sbc/logging';
import type { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import type { RpcClientOf } from '@sbc/rpc';

/**
 * Remembers when each key was last used and sends the latest times to the account service in one batch
 * every interval, so `last_used_at` stays current without a database write per request. A failed flush
 * keeps its entries for the next one.
 */
export function createKeyUseRecorder(deps: {
  account: RpcClientOf<typeof AccountService>;
  intervalMs: number;
  logger: Logger;
}) {
  let pending = new Map<string, Date>();
  const timer = setInterval(() => void flush(), deps.intervalMs);
  timer.unref();

  async function flush(): Promise<void> {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      await deps.account.recordKeyUse({
        uses: [...batch].map(([keyId, usedAt]) => ({ keyId, usedAt: timestampFromDate(usedAt) })),
      });
    } catch (error) {
      for (const [keyId, usedAt] of batch) {
        const newer = pending.get(keyId);
        if (!newer || newer < usedAt) pending.set(keyId, usedAt);
      }
      deps.logger.warn({ err: error, keys: batch.size }, 'recording key use failed; will retry');
    }
  }

  return {
    touch(keyId: string, at = new Date()): void {
      pending.set(keyId, at);
    },
    flush,
    async stop(): Promise<void> {
      clearInterval(timer);
      await flush();
    },
  };
}

export type KeyUseRecorder = ReturnType<typeof createKeyUseRecorder>;
