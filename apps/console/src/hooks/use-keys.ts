import { useApiMutation, useApiQuery } from '../api/queries';
import { createKey, listKeys, revokeKey, updateKey } from '../api/routes';
import type { CreateKeyBody, UpdateKeyBody } from '../api/types';

// Shared: the Keys page lists and edits them, the request log filters by them, a team's page shows its keys.
const KEYS = () => ['/v1/keys'];

export const useKeys = () => useApiQuery(listKeys, { query: { limit: 100 } });
export const useMintKey = () =>
  useApiMutation(createKey, { input: (body: CreateKeyBody) => ({ body }), invalidates: KEYS });
export const useUpdateKey = () =>
  useApiMutation(updateKey, {
    input: ({ id, body }: { id: string; body: UpdateKeyBody }) => ({ params: { id }, body }),
    invalidates: KEYS,
  });
export const useRevokeKey = () =>
  useApiMutation(revokeKey, { input: (id: string) => ({ params: { id } }), invalidates: KEYS });
