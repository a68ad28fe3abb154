import chatToolCalls from './__fixtures__/bodies/chat-response-tool-calls.json';
import messagesText from './__fixtures__/bodies/messages-response-text.json';
import messagesThinking from './__fixtures__/bodies/messages-response-thinking.json';
import {
  chatChunk,
  chatReply,
  messagesEvent,
  messagesReply,
  responsesEvent,
  responsesReply,
  shapeIssues,
} from './__fixtures__/consumer-shapes';
import { payload, received, translate } from './__fixtures__/streams/replay';
import { parseChatResponse } from './chat/parse-response';
import { renderChatResponse } from './chat/render-response';
import { createChatStreamRenderer } from './chat/stream-renderer';
import type { ChatResponse } from './ir';
import { parseMessagesResponse } from './messages/parse-response';
import { renderMessagesResponse } from './messages/render-response';
import { createMessagesStreamRenderer } from './messages/stream-renderer';
import { renderResponsesResponse } from './responses/render-response';
import { createResponsesStreamRenderer } from './responses/stream-renderer';

/**
 * Every reply the edge renders, from either upstream, passes the strictest consumer shapes in wide use
 * (`__fixtures__/consumer-shapes.ts`), streamed and not. The golden upstream bodies are in the providers'
 * documented shapes, so they must pass too.
 */

const MODEL = 'house/smart';

const replies: Array<[string, ChatResponse]> = [
  ['an Anthropic text reply', parseMessagesResponse(messagesText)],
  ['an Anthropic reply with thinking and a tool call', parseMessagesResponse(messagesThinking)],
  ['an OpenAI reply with parallel tool calls', parseChatResponse(chatToolCalls)],
  ['a reply cut at its output limit', { ...parseMessagesResponse(messagesText), stopReason: 'max_tokens' }],
];

describe('golden upstream bodies', () => {
  it('are in the exact shapes the providers document', () => {
    expect(shapeIssues(messagesReply, messagesText)).toEqual([]);
    expect(shapeIssues(messagesReply, messagesThinking)).toEqual([]);
    expect(shapeIssues(chatReply, chatToolCalls)).toEqual([]);
  });
});

describe.each(replies)('non-streaming: %s', (_name, reply) => {
  const answer = { ...reply, model: MODEL };

  it('as a Messages body: text blocks without a citations key, every usage field, a msg_ id', () => {
    const body = renderMessagesResponse(answer);
    expect(shapeIssues(messagesReply, body)).toEqual([]);
    for (const block of body.content as Array<Record<string, unknown>>) expect(block).not.toHaveProperty('citations');
  });

  it('as a chat completion', () => {
    expect(shapeIssues(chatReply, renderChatResponse(answer))).toEqual([]);
  });

  it('as a Responses object: no null user, cache_write_tokens always present', () => {
    const body = renderResponsesResponse(answer);
    expect(shapeIssues(responsesReply, body)).toEqual([]);
    expect(body).not.toHaveProperty('user');
  });
});

const streams = [
  'chat-text.sse',
  'chat-reasoning.sse',
  'chat-tools-parallel.sse',
  'chat-tools-then-stop.sse',
  'chat-fake-stream.sse',
  'messages-text.sse',
  'messages-thinking.sse',
  'messages-tools.sse',
];

describe.each(streams)('streamed from %s', (name) => {
  it('every Messages event passes, and its event line names its type', () => {
    const frames = received(translate(name, createMessagesStreamRenderer({ model: MODEL })));
    expect(frames.length).toBeGreaterThan(2);
    for (const frame of frames) {
      const event = payload(frame);
      expect({ event: frame.event, issues: shapeIssues(messagesEvent, event) }).toEqual({
        event: event.type,
        issues: [],
      });
    }
  });

  it.each([true, false])('every chat chunk passes (include_usage %s)', (includeUsage) => {
    const frames = received(translate(name, createChatStreamRenderer({ model: MODEL, includeUsage })));
    expect(frames[frames.length - 1]!.data).toBe('[DONE]');
    for (const frame of frames.slice(0, -1)) expect(shapeIssues(chatChunk, payload(frame))).toEqual([]);
  });

  it('every Responses event passes, the terminal one with the whole response', () => {
    const frames = received(translate(name, createResponsesStreamRenderer({ model: MODEL })));
    for (const frame of frames)
      expect({ event: frame.event, issues: shapeIssues(responsesEvent, payload(frame)) }).toEqual({
        event: payload(frame).type,
        issues: [],
      });
    expect(payload(frames[frames.length - 1]!).type).toMatch(/^response\.(completed|incomplete)$/);
  });
});
