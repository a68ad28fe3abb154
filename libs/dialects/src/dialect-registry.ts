import type { CallerDialect, UpstreamAdapter } from './adapter';
import { CHAT } from './chat/adapter';
import { parseChatResponse } from './chat/parse-response';
import { renderChatRequest } from './chat/render-request';
import { createChatStreamParser } from './chat/stream-parser';
import type { Dialect, UpstreamDialect } from './ir';
import { EMBEDDINGS } from './embeddings/adapter';
import { MESSAGES } from './messages/adapter';
import { parseMessagesResponse } from './messages/parse-response';
import { renderMessagesRequest } from './messages/render-request';
import { createMessagesStreamParser } from './messages/stream-parser';
import { RESPONSES } from './responses/adapter';
import { restoreToolNames, toolNameMap } from './tool-names';
import { usageFromChat, usageFromMessages } from './usage';

const OPENAI: UpstreamAdapter = {
  name: 'openai',
  path: '/chat/completions',
  renderRequest: (request, model) => renderChatRequest(request, model),
  // Tool names cut to OpenAI's 64 characters go back to the caller as it declared them.
  parseReply: (raw, request) => restoreToolNames(parseChatResponse(raw), request?.tools),
  usageOf: usageFromChat,
  streamParser(request) {
    const parser = createChatStreamParser();
    const shortNames = toolNameMap(request?.tools);
    if (shortNames.size === 0) return parser;
    return {
      push(event) {
        const events = parser.push(event);
        for (const item of events) if (item.type === 'tool_call') item.name = shortNames.get(item.name) ?? item.name;
        return events;
      },
    };
  },
  headers: (apiKey): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
};

const ANTHROPIC: UpstreamAdapter = {
  name: 'anthropic',
  path: '/messages',
  countTokensPath: '/messages/count_tokens',
  renderRequest: (request, model, options) => renderMessagesRequest(request, model, options),
  parseReply: (raw) => parseMessagesResponse(raw),
  usageOf: usageFromMessages,
  streamParser: () => createMessagesStreamParser(),
  headers(apiKey, passHeaders) {
    const headers: Record<string, string> = { 'anthropic-version': passHeaders?.['anthropic-version'] ?? '2023-06-01' };
    const beta = passHeaders?.['anthropic-beta'];
    if (beta) headers['anthropic-beta'] = beta;
    if (apiKey) headers['x-api-key'] = apiKey;
    return headers;
  },
};

const CALLER_DIALECTS: Readonly<Record<Dialect, CallerDialect>> = {
  chat: CHAT,
  responses: RESPONSES,
  messages: MESSAGES,
  embeddings: EMBEDDINGS,
};
const UPSTREAM_ADAPTERS: Readonly<Record<UpstreamDialect, UpstreamAdapter>> = { openai: OPENAI, anthropic: ANTHROPIC };

/** The adapter record of a caller dialect. */
export function callerDialect(name: Dialect): CallerDialect {
  return CALLER_DIALECTS[name];
}

/** The adapter record of an upstream dialect. */
export function upstreamAdapter(name: UpstreamDialect): UpstreamAdapter {
  return UPSTREAM_ADAPTERS[name];
}
