import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
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

/**
 * `/mcp/{slug}` relays the rest of one server's features as the server answers them: resources (list, templates,
 * read, subscribe), prompts, completions and its log level. `clientFor` opens (or refuses) the session's client to
 * that server for the request: a key whose `allowed_tools` narrow it reaches tools alone, so none of this widens it.
 */
export function relayServerFeatures(server: Server, clientFor: (extra: Extra) => Promise<Client>): void {
  const relay =
    <P, R>(call: (client: Client, params: P, extra: Extra) => Promise<R>) =>
    async (request: { params?: P }, extra: Extra): Promise<R> => {
      const client = await clientFor(extra);
      return call(client, request.params as P, extra);
    };
  const options = (extra: Extra) => ({ signal: extra.signal });
  server.setRequestHandler(
    ListResourcesRequestSchema,
    relay((client, params, extra) => client.listResources(params, options(extra))),
  );
  server.setRequestHandler(
    ListResourceTemplatesRequestSchema,
    relay((client, params, extra) => client.listResourceTemplates(params, options(extra))),
  );
  server.setRequestHandler(
    ReadResourceRequestSchema,
    relay((client, params, extra) => client.readResource(params, options(extra))),
  );
  server.setRequestHandler(
    SubscribeRequestSchema,
    relay((client, params, extra) => client.subscribeResource(params, options(extra))),
  );
  server.setRequestHandler(
    UnsubscribeRequestSchema,
    relay((client, params, extra) => client.unsubscribeResource(params, options(extra))),
  );
  server.setRequestHandler(
    ListPromptsRequestSchema,
    relay((client, params, extra) => client.listPrompts(params, options(extra))),
  );
  server.setRequestHandler(
    GetPromptRequestSchema,
    relay((client, params, extra) => client.getPrompt(params, options(extra))),
  );
  server.setRequestHandler(
    CompleteRequestSchema,
    relay((client, params, extra) => client.complete(params, options(extra))),
  );
  server.setRequestHandler(
    SetLevelRequestSchema,
    relay((client, params, extra) => client.setLoggingLevel(params.level, options(extra))),
  );
}

/** Said when a narrowed key asks for more than tools. */
export function toolsOnly(): McpError {
  return new McpError(ErrorCode.InvalidRequest, "This key's allowed_tools limit it to tools.");
}
