export * from './ir';
export {
  createTranslatedStream,
  type CallerDialect,
  type CallerStream,
  type CallerStreamOptions,
  type Passthrough,
  type UpstreamAdapter,
} from './adapter';
export { callerDialect, upstreamAdapter } from './dialect-registry';
export { dialectId, OPENAI_TOOL_NAME_MAX, sanitizeToolId } from './ids';
export {
  chatFinishReason,
  messagesStopReason,
  responsesStatus,
  settleStopReason,
  stopFromChat,
  stopFromMessages,
} from './stop-reasons';
export {
  chatUsage,
  mergeUsage,
  messagesUsage,
  responsesUsage,
  usageFromChat,
  usageFromMessages,
  ZERO_USAGE,
} from './usage';
export { responsesObject, type ResponsesObjectInput } from './responses/response-object';
export { DialectRequestError, type DialectIssue } from './request-error';
export { fallbackModelsOf } from './fallback-models';
export { DROPPED_FIELDS, droppedForUpstream, type DroppedField, type DroppedFieldSpec } from './dropped-fields';
export { anthropicErrorType, openAiErrorType, parseUpstreamError, renderErrorBody } from './error-bodies';
export { UpstreamError, type UpstreamErrorReason } from './upstream-error';
export { openAiToolName, restoreToolNames, toolNameMap } from './tool-names';
export { parseToolArguments, stringifyToolInput } from './tool-arguments';
export { parseDataUrl, toDataUrl } from './data-url';
export { parseChatRequest } from './chat/parse-request';
export { renderChatRequest } from './chat/render-request';
export { parseChatResponse } from './chat/parse-response';
export { renderChatResponse } from './chat/render-response';
export { parseResponsesRequest, RESPONSE_ID } from './responses/parse-request';
export { renderResponsesResponse } from './responses/render-response';
export { encryptedContentOf, reasoningFromItem } from './responses/reasoning-carrier';
export { parseMessagesRequest } from './messages/parse-request';
export { renderMessagesRequest, type MessagesRenderOptions } from './messages/render-request';
export { parseMessagesResponse } from './messages/parse-response';
export { renderMessagesResponse } from './messages/render-response';
export { createSseDecoder, encodeSse, type SseDecoder, type SseEvent } from './sse';
export { copyBytes, EventTemplate } from './event-template';
export { nowSeconds, parseData } from './stream';
export type { StreamPassthrough, StreamRenderer, StreamSummary, UpstreamStreamParser } from './stream';
export { createChatStreamParser, type ChatStreamParser } from './chat/stream-parser';
export { createMessagesStreamParser, type MessagesStreamParser } from './messages/stream-parser';
export { createChatStreamRenderer, type ChatStreamRendererOptions } from './chat/stream-renderer';
export { createMessagesStreamRenderer, type MessagesStreamRendererOptions } from './messages/stream-renderer';
export { createResponsesStreamRenderer, type ResponsesStreamRendererOptions } from './responses/stream-renderer';
export { createChatPassthrough, type ChatPassthroughOptions } from './chat/stream-passthrough';
export { createMessagesPassthrough, type MessagesPassthroughOptions } from './messages/stream-passthrough';
export { chatStreamError, messagesStreamError } from './stream-errors';
export { parseBetaHeader, refusedBetas, shapeBetas, type AnthropicBetaPolicy } from './anthropic-beta';
