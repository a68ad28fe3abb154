import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CompleteRequestSchema,
  CompleteResultSchema,
  EmptyResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  GetPromptResultSchema,
  ListPromptsRequestSchema,
  ListPromptsResultSchema,
  ListResourcesRequestSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResultSchema,
  McpError,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';

/** What `/mcp/{slug}` declares besides tools: the server's other features, relayed. */
export const RELAYED_CAPABILITIES = {
  resources: { subscribe: true },
  prompts: {},
  logging: {},
  completions: {},
};

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The requests `/mcp/{slug}` passes on as they came, each with the schema of the server's answer. */
const RELAYED = [
  [ListResourcesRequestSchema, ListResourcesResultSchema],
  [ListResourceTemplatesRequestSchema, ListResourceTemplatesResultSchema],
  [ReadResourceRequestSchema, ReadResourceResultSchema],
  [SubscribeRequestSchema, EmptyResultSchema],
  [UnsubscribeRequestSchema, EmptyResultSchema],
  [ListPromptsRequestSchema, ListPromptsResultSchema],
  [GetPromptRequestSchema, GetPromptResultSchema],
  [CompleteRequestSchema, CompleteResultSchema],
  [SetLevelRequestSchema, EmptyResultSchema],
] as const;

/**
 * `/mcp/{slug}` relays the rest of one server's features as the server answers them: resources (list, templates,
 * read, subscribe), prompts, completions and its log level. `clientFor` opens (or refuses) the session's client to
 * that server for the request: a key whose `allowed_tools` narrow it reaches tools alone, so none of this widens it.
 */
export function relayServerFeatures(server: Server, clientFor: (extra: Extra) => Promise<Client>): void {
  for (const [requestSchema, resultSchema] of RELAYED)
    server.setRequestHandler(requestSchema, async (request, extra) => {
      const client = await clientFor(extra);
      return client.request(request, resultSchema, { signal: extra.signal });
    });
}

/** Said when a narrowed key asks for more than tools. */
export function toolsOnly(): McpError {
  return new McpError(ErrorCode.InvalidRequest, "This key's allowed_tools limit it to tools.");
}
