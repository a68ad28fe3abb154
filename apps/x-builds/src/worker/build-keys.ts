import type { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { KeyBounds } from '../intake/admit';
import type { JobRow } from '../store/jobs';

export type AccountClient = RpcClientOf<typeof AccountService>;

/**
 * The key a build's model calls are billed to: minted on the job's account when a worker claims the job,
 * holding only `gateway:invoke`, with the submitting key's models and caps. When the submitting key may call
 * models itself, the key is minted as that key, so the account service refuses anything wider. Its secret
 * lives in the worker's memory only; the job stores its id.
 */
export async function mintBuildKey(
  account: AccountClient,
  job: JobRow,
  requestId: string,
): Promise<{ id: string; secret: string }> {
  const bounds = job.keyBounds as unknown as Partial<KeyBounds>;
  const reply = await account.createKey(
    {
      caller: { userId: job.userId, keyId: bounds.boundByKey ? (job.keyId ?? undefined) : undefined },
      name: `build ${job.id}`,
      scopes: ['gateway:invoke'],
      allowedModels: bounds.allowedModels ? { values: bounds.allowedModels } : undefined,
      dailyLimitCredits: bounds.dailyLimitCredits === undefined ? undefined : BigInt(bounds.dailyLimitCredits),
      monthlyLimitCredits: bounds.monthlyLimitCredits === undefined ? undefined : BigInt(bounds.monthlyLimitCredits),
      route: bounds.route ?? 'auto',
      mode: 'model',
      incognito: false,
    },
    { requestId },
  );
  return { id: reply.key!.id, secret: reply.secret };
}

export async function revokeBuildKey(
  account: AccountClient,
  userId: string,
  keyId: string,
  requestId: string,
): Promise<void> {
  await account.revokeKey({ userId, keyId }, { requestId });
}
