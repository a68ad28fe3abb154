import {
  assembleChat,
  assembleMessages,
  assembleResponses,
  chatViolations,
  messagesViolations,
  responsesViolations,
  translate,
} from './__fixtures__/streams/replay';
import { createChatStreamRenderer } from './chat/stream-renderer';
import { createMessagesStreamRenderer } from './messages/stream-renderer';
import { reasoningFromItem } from './responses/reasoning-carrier';
import { createResponsesStreamRenderer } from './responses/stream-renderer';

/**
 * Every upstream × caller pair on the same three replies. The chat and Anthropic fixtures of a scenario
 * carry the same content and token counts, so each caller must see the same answer whichever upstream
 * produced it.
 */

const MODEL = 'house/smart';
const SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds/xy+z0YE3VH/k8aq9k8AN9EZg==';
const CALLS = [
  { name: 'get_weather', input: { location: 'Paris' } },
  { name: 'get_time', input: { tz: 'Europe/Paris' } },
];
/** The argument text exactly as both fixtures stream it. */
const ARGUMENTS = ['{"location": "Paris"}', '{"tz": "Europe/Paris"}'];

const upstreams = [
  { upstream: 'openai', text: 'chat-text.sse', tools: 'chat-tools-parallel.sse', reasoning: 'chat-reasoning.sse' },
  { upstream: 'anthropic', text: 'messages-text.sse', tools: 'messages-tools.sse', reasoning: 'messages-thinking.sse' },
] as const;

describe.each(upstreams)('$upstream upstream', ({ upstream, text, tools, reasoning }) => {
  describe('→ chat caller', () => {
    const render = (name: string) => translate(name, createChatStreamRenderer({ model: MODEL, includeUsage: true }));

    it('text arrives as content deltas, finish_reason stop, then one usage chunk', () => {
      const frames = render(text);
      expect(chatViolations(frames, { model: MODEL, includeUsage: true })).toEqual([]);
      const reply = assembleChat(frames);
      expect(reply.text).toBe('Bonjour le monde — ça va? 🌍');
      expect(reply.finishReasons).toEqual(['stop']);
      expect(reply.usages).toEqual([
        expect.objectContaining({ prompt_tokens: upstream === 'openai' ? 24 : 472, completion_tokens: 9 }),
      ]);
    });

    it('parallel tool calls keep their ids, indices and argument pieces', () => {
      const frames = render(tools);
      expect(chatViolations(frames, { model: MODEL, includeUsage: true })).toEqual([]);
      const reply = assembleChat(frames);
      expect(reply.calls.map((c) => ({ name: c.name, input: JSON.parse(c.arguments) }))).toEqual(CALLS);
      expect(reply.calls.map((c) => c.arguments)).toEqual(ARGUMENTS);
      expect(reply.calls.map((c) => c.id)).toEqual(
        upstream === 'openai'
          ? ['call_3QHd5bTjKfV9r2LmXw8yNcAe', 'call_8WmZsL0pQe4xTn7YbVd2HkJu']
          : ['toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'toolu_01HzB8cV3kYqW5nLpD2sRtMa'],
      );
      expect(reply.finishReasons).toEqual(['tool_calls']);
      expect(reply.usages).toEqual([
        expect.objectContaining({
          prompt_tokens: 312,
          completion_tokens: 48,
          prompt_tokens_details: { cached_tokens: 256 },
        }),
      ]);
    });

    it('reasoning arrives as reasoning_content before the answer', () => {
      const reply = assembleChat(render(reasoning));
      expect(reply.reasoning).toBe('The user asks 2+2. That is 4.');
      expect(reply.text).toBe('2 + 2 = 4.');
    });
  });

  describe('→ messages caller', () => {
    const render = (name: string) => translate(name, createMessagesStreamRenderer({ model: MODEL }));

    it('text arrives as one text block with end_turn and full usage', () => {
      const frames = render(text);
      expect(messagesViolations(frames)).toEqual([]);
      const reply = assembleMessages(frames);
      expect(reply.message).toMatchObject({
        type: 'message',
        role: 'assistant',
        model: MODEL,
        content: [],
        stop_reason: null,
      });
      expect(reply.message.id).toEqual(expect.stringMatching(/^msg_/));
      expect(reply.blocks).toEqual([{ type: 'text', text: 'Bonjour le monde — ça va? 🌍' }]);
      expect(reply.stopReason).toBe('end_turn');
      expect(reply.usage).toEqual({
        input_tokens: upstream === 'openai' ? 24 : 472,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 9,
      });
    });

    it('parallel tool calls become tool_use blocks with parsed input and stop_reason tool_use', () => {
      const frames = render(tools);
      expect(messagesViolations(frames)).toEqual([]);
      const reply = assembleMessages(frames);
      expect(reply.blocks.map((b) => ({ name: b.name, input: b.input }))).toEqual(CALLS);
      expect(reply.blocks.map((b) => b.type)).toEqual(['tool_use', 'tool_use']);
      expect(reply.stopReason).toBe('tool_use');
      // Anthropic counts input without the cache: 312 prompt tokens of which 256 were cache reads.
      expect(reply.usage).toEqual({
        input_tokens: 56,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 256,
        output_tokens: 48,
      });
    });

    it('reasoning becomes a thinking block; an Anthropic signature and redacted thinking round-trip', () => {
      const frames = render(reasoning);
      expect(messagesViolations(frames)).toEqual([]);
      const blocks = assembleMessages(frames).blocks;
      if (upstream === 'anthropic') {
        expect(blocks).toEqual([
          { type: 'thinking', thinking: 'The user asks 2+2. That is 4.', signature: SIGNATURE },
          { type: 'redacted_thinking', data: expect.stringMatching(/^EmwKAhgB/) },
          { type: 'text', text: '2 + 2 = 4.' },
        ]);
      } else {
        expect(blocks).toEqual([
          { type: 'thinking', thinking: 'The user asks 2+2. That is 4.', signature: '' },
          { type: 'text', text: '2 + 2 = 4.' },
        ]);
      }
    });
  });

  describe('→ responses caller', () => {
    const render = (name: string) => translate(name, createResponsesStreamRenderer({ model: MODEL }));

    it('text arrives as one message item and response.completed with usage', () => {
      const frames = render(text);
      expect(responsesViolations(frames)).toEqual([]);
      const reply = assembleResponses(frames);
      expect(reply.terminal).toBe('response.completed');
      expect(reply.response).toMatchObject({
        status: 'completed',
        model: MODEL,
        usage: { input_tokens: upstream === 'openai' ? 24 : 472, output_tokens: 9 },
      });
      expect(reply.items).toEqual([
        {
          id: expect.stringMatching(/^msg_/),
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Bonjour le monde — ça va? 🌍', annotations: [], logprobs: [] }],
        },
      ]);
    });

    it('parallel tool calls become function_call items keeping the upstream call ids', () => {
      const frames = render(tools);
      expect(responsesViolations(frames)).toEqual([]);
      const reply = assembleResponses(frames);
      expect(reply.terminal).toBe('response.completed');
      expect(reply.items).toEqual(
        CALLS.map((call, i) => ({
          id: expect.stringMatching(/^fc_/),
          type: 'function_call',
          status: 'completed',
          call_id:
            upstream === 'openai'
              ? ['call_3QHd5bTjKfV9r2LmXw8yNcAe', 'call_8WmZsL0pQe4xTn7YbVd2HkJu'][i]
              : ['toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'toolu_01HzB8cV3kYqW5nLpD2sRtMa'][i],
          name: call.name,
          arguments: ARGUMENTS[i],
        })),
      );
    });

    it(
      'reasoning becomes a reasoning item; an Anthropic signature and redacted thinking round-trip through ' +
        'encrypted_content',
      () => {
        const frames = render(reasoning);
        expect(responsesViolations(frames)).toEqual([]);
        const items = assembleResponses(frames).items as Array<Record<string, unknown>>;
        const summary = [{ type: 'summary_text', text: 'The user asks 2+2. That is 4.' }];
        if (upstream === 'anthropic') {
          expect(items.map((i) => i.type)).toEqual(['reasoning', 'reasoning', 'message']);
          expect(items[0]).toEqual({
            id: expect.stringMatching(/^rs_/),
            type: 'reasoning',
            summary,
            encrypted_content: expect.any(String),
          });
          expect(items[1]).toEqual({
            id: expect.stringMatching(/^rs_/),
            type: 'reasoning',
            summary: [],
            encrypted_content: expect.any(String),
          });
          // What a Responses client replays comes back as Anthropic-signed reasoning.
          expect(reasoningFromItem('', String(items[0]!.encrypted_content), undefined)).toMatchObject({
            origin: 'anthropic',
            signature: SIGNATURE,
          });
          expect(reasoningFromItem('', String(items[1]!.encrypted_content), undefined)).toMatchObject({
            origin: 'anthropic',
            redacted: expect.stringMatching(/^EmwKAhgB/),
          });
        } else {
          expect(items.map((i) => i.type)).toEqual(['reasoning', 'message']);
          expect(items[0]).toEqual({ id: expect.stringMatching(/^rs_/), type: 'reasoning', summary });
        }
        expect(items[items.length - 1]).toMatchObject({
          type: 'message',
          content: [{ type: 'output_text', text: '2 + 2 = 4.' }],
        });
      },
    );
  });
});
