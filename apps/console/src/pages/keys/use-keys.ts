import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, request } from '../../api/client';
import type { CallerKey, CallerKeyList, CreateKeyBody, MintedKey, UpdateKeyBody } from '../../api/types';

const KEYS = ['keys'] as const;

export function useKeys() {
  return useQuery({ queryKey: KEYS, queryFn: () => get<CallerKeyList>('/v1/keys', { limit: 100 }) });
}

function useKeyMutation<Input, Output>(call: (input: Input) => Promise<Output>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: call, onSuccess: () => client.invalidateQueries({ queryKey: KEYS }) });
}

export const useMintKey = () => useKeyMutation((body: CreateKeyBody) => request<MintedKey>('POST', '/v1/keys', body));
export const useUpdateKey = () =>
  useKeyMutation(({ id, body }: { id: string; body: UpdateKeyBody }) =>
    request<CallerKey>('PATCH', `/v1/keys/${encodeURIComponent(id)}`, body),
  );
export const useRevokeKey = () =>
  useKeyMutation((id: string) => request<CallerKey>('DELETE', `/v1/keys/${encodeURIComponent(id)}`));
