import { useApiMutation, useApiQuery } from '../../api/queries';
import { addToolServer, deleteToolServer, listToolServers, probeToolServer } from '../../api/routes';
import type { CreateToolServerBody } from '../../api/types';

const TOOL_SERVERS = () => ['/v1/mcp/servers'];
const bySlug = (slug: string) => ({ params: { slug } });

export const useToolServers = () => useApiQuery(listToolServers, { query: { limit: 100 } });
export const useAddToolServer = () =>
  useApiMutation(addToolServer, { input: (body: CreateToolServerBody) => ({ body }), invalidates: TOOL_SERVERS });
export const useProbeToolServer = () => useApiMutation(probeToolServer, { input: bySlug, invalidates: TOOL_SERVERS });
export const useDeleteToolServer = () => useApiMutation(deleteToolServer, { input: bySlug, invalidates: TOOL_SERVERS });
