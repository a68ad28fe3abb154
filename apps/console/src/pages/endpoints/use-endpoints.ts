import { useApiMutation, useApiQuery } from '../../api/queries';
import { addEndpoint, deleteEndpoint, editEndpoint, listEndpoints, probeEndpoint } from '../../api/routes';
import type { CreateUpstreamBody, UpdateUpstreamBody } from '../../api/types';

const ENDPOINTS = () => ['/v1/upstreams'];
const bySlug = (slug: string) => ({ params: { slug } });

export const useEndpoints = () => useApiQuery(listEndpoints, { query: { limit: 100 } });
export const useAddEndpoint = () =>
  useApiMutation(addEndpoint, { input: (body: CreateUpstreamBody) => ({ body }), invalidates: ENDPOINTS });
export const useEditEndpoint = () =>
  useApiMutation(editEndpoint, {
    input: ({ slug, body }: { slug: string; body: UpdateUpstreamBody }) => ({ ...bySlug(slug), body }),
    invalidates: ENDPOINTS,
  });
export const useProbeEndpoint = () => useApiMutation(probeEndpoint, { input: bySlug, invalidates: ENDPOINTS });
export const useDeleteEndpoint = () => useApiMutation(deleteEndpoint, { input: bySlug, invalidates: ENDPOINTS });
