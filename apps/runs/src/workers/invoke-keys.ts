import { ApiError } from '@sbc/errors';
import type { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { RunCallerJson, RunRow } from '../store/runs';

/**
 * Each run's model calls use a key of their own, minted by the account service when a worker claims the run:
 * only `gateway:invoke`, and within the bounds of the key that started the run (the account service checks
 * that against its own table). The secret stays in the worker's memory; the run stores only the key id.
 */
export interface InvokeKeys {
  mint(run: RunRow): Promise<{ id: string; secret: string }>;
  /**
   * A key for a batch's lines, within the bounds of the key that created the batch, marked as the batch's: its
   * answered calls are billed under their line's id (docs/batches.md "Billed once").
   */
  mintForBatch(caller: RunCallerJson, batchId: string): Promise<{ id: string; secret: string }>;
  /** Revokes a run's key; a key already gone is fine. */
  revoke(userId: string, keyId: string): Promise<void>;
}

export function createInvokeKeys(account: RpcClientOf<typeof AccountService>): InvokeKeys {
  const mintFor = async (caller: RunCallerJson, name: string, batchId?: string) => {
    const reply = await account.createKey({
      caller: { userId: caller.user_id, ...(caller.key_id ? { keyId: caller.key_id } : {}) },
      name,
      scopes: ['gateway:invoke'],
      allowedModels: caller.allowed_models === null ? undefined : { values: caller.allowed_models },
      dailyLimitCredits: caller.daily_limit_credits === null ? undefined : BigInt(caller.daily_limit_credits),
      monthlyLimitCredits: caller.monthly_limit_credits === null ? undefined : BigInt(caller.monthly_limit_credits),
      route: caller.route,
      mode: 'agent',
      incognito: false,
      orgId: caller.org_id ?? undefined,
      batchId,
    });
    if (!reply.key) throw new ApiError('internal_error', undefined, { cause: new Error('CreateKey returned no key') });
    return { id: reply.key.id, secret: reply.secret };
  };
  return {
    mint: (run) => mintFor(run.caller as unknown as RunCallerJson, `run ${run.id}`),
    mintForBatch: (caller, batchId) => mintFor(caller, `batch ${batchId}`, batchId),
    async revoke(userId, keyId) {
      try {
        await account.revokeKey({ userId, keyId });
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 'not_found')) throw error;
      }
    },
  };
}
