import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, request } from '../../api/client';
import type { CreateUpstreamBody, UpdateUpstreamBody, UpstreamList, UpstreamWithProbe } from '../../api/types';

const ENDPOINTS = ['endpoints'] as const;

export function useEndpoints() {
  return useQuery({ queryKey: ENDPOINTS, queryFn: () => get<UpstreamList>('/v1/upstreams', { limit: 100 }) });
}

function useEndpointMutation<Input, Output>(call: (input: Input) => Promise<Output>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: call, onSuccess: () => client.invalidateQueries({ queryKey: ENDPOINTS }) });
}

const path = (slug: string) => `/v1/upstreams/${encodeURIComponent(slug)}`;
export const useAddEndpoint = () =>
  useEndpointMutation((body: CreateUpstreamBody) => request<UpstreamWithProbe>('POST', '/v1/upstreams', body));
export const useEditEndpoint = () =>
  useEndpointMutation(({ slug, body }: { slug: string; body: UpdateUpstreamBody }) =>
    request<UpstreamWithProbe>('PATCH', path(slug), body),
  );
export const useProbeEndpoint = () =>
  useEndpointMutation((slug: string) => request<UpstreamWithProbe>('POST', `${path(slug)}/probe`));
export const useDeleteEndpoint = () => useEndpointMutation((slug: string) => request<void>('DELETE', path(slug)));
