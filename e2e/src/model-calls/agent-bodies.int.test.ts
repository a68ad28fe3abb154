import { readFileSync } from 'node:fs';
import path from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { rawStream, type RawFrame } from '../support/model-calls.harness';
import { anthropicFor, OWNER_KEY, simHouse, startStack, type Stack } from '../support/stack';

/**
 * The bodies today's coding agents send (dialects.md §9), recorded from the real CLIs through a proxy (Claude
 * Code 2.1.332 in Messages, Codex 0.171.0 in Responses, prose replaced by placeholders), sent through the real
 * edge to `house` (the sim in the OpenAI dialect: translated) and `house-omni` (the sim in the Anthropic
 * dialect: Messages passes through, Responses is translated), and the same shapes through the official SDKs.
 */

type Json = Record<string, any>;
interface Recorded {
  path: string;
  headers: Record<string, string | null>;
  body: Json;
}
const recorded = (name: string): Recorded =>
  JSON.parse(
    readFileSync(path.join(__dirname, '../../../libs/dialects/src/__fixtures__/bodies/agents', `${name}.json`), 'utf8'),
  ) as Recorded;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ label: 'agent_bodies', house: simHouse });
}, 60_000);
afterAll(() => stack?.stop());

const MODELS = ['house', 'house-omni'] as const;
const NAMESPACE = 'multi_agent_v1';

/** A recorded request sent as the CLI sent it (path, headers, body), with `model` chosen by the test. */
async function replay(name: string, model: string, edit: (body: Json) => void = () => undefined, key = OWNER_KEY) {
  const { path: at, headers, body } = recorded(name);
  const sent = { ...structuredClone(body), model };
  edit(sent);
  const extra = Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => !!entry[1]));
  return rawStream(stack.edge.url, at, sent, { ...extra, authorization: `Bearer ${key}` });
}

const json = (frames: RawFrame[]): Json[] => frames.map((frame) => frame.json as Json).filter(Boolean);

describe('Claude Code’s Messages bodies', () => {
  it.each(MODELS)('its first turn (a system message after the user turn) streams a tool call on %s', async (model) => {
    const { res, frames } = await replay('claude-code-first-turn', model);
    expect(res.status).toBe(200);
    const events = json(frames);
    expect(events[0]).toMatchObject({ type: 'message_start', message: { model } });
    expect(events.find((event) => event.type === 'content_block_start')?.content_block).toMatchObject({
      type: 'tool_use',
      name: 'Bash',
    });
    const input = events
      .filter((event) => event.delta?.type === 'input_json_delta')
      .map((event) => event.delta.partial_json as string)
      .join('');
    expect(JSON.parse(input)).toEqual({ command: 'echo hi' });
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
    expect(events.find((event) => event.type === 'message_delta')?.delta.stop_reason).toBe('tool_use');
    // Translated, the fields an OpenAI engine cannot take are named; passed through, nothing is dropped.
    const dropped = res.headers.get('x-sbc-dropped-fields');
    if (model === 'house')
      expect(dropped?.split(',').sort()).toEqual(
        ['cache_control', 'context_management', 'thinking.display', 'tools.*.defer_loading'].sort(),
      );
    else expect(dropped).toBeNull();
  });

  it.each(MODELS)('its tool-result turn gets the reply that uses the result on %s', async (model) => {
    const { res, frames } = await replay('claude-code-tool-result', model);
    expect(res.status).toBe(200);
    const text = json(frames)
      .filter((event) => event.delta?.type === 'text_delta')
      .map((event) => event.delta.text as string)
      .join('');
    expect(text).toContain('Simulated reply using the tool result');
  });

  it.each(MODELS)('count_tokens counts its body on %s', async (model) => {
    const { body } = recorded('claude-code-tool-result');
    const { max_tokens: _limit, stream: _stream, metadata: _metadata, ...count } = body;
    const res = await fetch(`${stack.edge.url}/v1/messages/count_tokens?beta=true`, {
      method: 'POST',
      headers: { 'x-api-key': OWNER_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...count, model }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).input_tokens).toBeGreaterThan(100);
  });

  it('a role Messages does not know is a 400 worded as Anthropic words it', async () => {
    const { res, text } = await replay('claude-code-first-turn', 'house', (body) => {
      body.messages.push({ role: 'tool', content: 'x' });
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'messages.2.role: Unexpected role "tool". Allowed roles are "user", "assistant" or "system".',
      },
    });
  });

  it('without a credential its body is refused (401), and with a key that may not call models (403)', async () => {
    const noKey = await fetch(`${stack.edge.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(recorded('claude-code-first-turn').body),
    });
    expect(noKey.status).toBe(401);
    expect(((await noKey.json()) as Json).error.type).toBe('authentication_error');
    const reader = await stack.seedKey({ scopes: ['usage:read'] });
    const { res } = await replay('claude-code-first-turn', 'house', undefined, reader.secret);
    expect(res.status).toBe(403);
  });

  it.each(MODELS)('the Anthropic SDK’s system message mid-conversation is answered on %s', async (model) => {
    const client: Anthropic = anthropicFor(stack.edge.url);
    const reply = await client.messages.create({
      model,
      max_tokens: 1000,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
      metadata: { user_id: 'user-1' },
      cache_control: { type: 'ephemeral' },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hello there', cache_control: { type: 'ephemeral' } }] },
        { role: 'system', content: 'Answer briefly.' },
      ],
    });
    expect(reply.content[0]).toMatchObject({ type: 'text', text: 'Simulated reply to: Hello there' });
  });
});

describe('Codex’s Responses bodies', () => {
  const streamed = async (name: string, model: string, edit?: (body: Json) => void) => {
    const { res, frames } = await replay(name, model, edit);
    expect(res.status).toBe(200);
    return { res, events: json(frames) };
  };

  it.each(MODELS)(
    'a call to a namespaced function streams back with its own name and namespace on %s',
    async (model) => {
      const { res, events } = await streamed('codex-first-turn', model);
      expect(events.map((event) => event.type)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        ...events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.type),
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ]);
      const item = { type: 'function_call', name: 'wait_agent', namespace: NAMESPACE };
      expect(events[2]!.item).toMatchObject({ ...item, status: 'in_progress' });
      expect(events.at(-2)!.item).toMatchObject({
        ...item,
        status: 'completed',
        arguments: '{"targets":["agent-x"],"timeout_ms":10000}',
      });
      expect(events.at(-1)!.response.output).toEqual([events.at(-2)!.item]);
      // The hosted web_search is the only tool dropped; the namespace is offered.
      expect(res.headers.get('x-sbc-dropped-fields')?.split(',')).toEqual(
        expect.arrayContaining(['tools.*[built-in]', 'prompt_cache_key', 'client_metadata']),
      );
    },
  );

  it.each(MODELS)('the output of that call, sent back, gets the reply that uses it on %s', async (model) => {
    const { events } = await streamed('codex-namespace-result', model);
    const types = events.map((event) => event.type);
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.at(-1)!.response.output[0].content[0].text).toContain(
      'Simulated reply using the tool result: invalid agent id agent-x',
    );
  });

  it.each(MODELS)('a custom (free-form) tool is called as a custom_tool_call with its input on %s', async (model) => {
    const { events } = await streamed('codex-first-turn', model, (body) => {
      body.tools.push({
        type: 'custom',
        name: 'apply_patch',
        description: '[what apply_patch does]',
        format: { type: 'grammar', syntax: 'lark', definition: 'start: /(.|\\n)+/' },
      });
      body.input.at(-1).content[0].text = 'sim:call:apply_patch {"input":"*** Begin Patch\\n*** End Patch"}';
    });
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.at(-2)!.item).toMatchObject({
      type: 'custom_tool_call',
      name: 'apply_patch',
      input: '*** Begin Patch\n*** End Patch',
    });
  });

  it('a tool_choice that forces a hosted tool is a 400 naming tool_choice', async () => {
    const { res, text } = await replay('codex-first-turn', 'house', (body) => {
      body.tool_choice = { type: 'web_search' };
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({
      error: { type: 'invalid_request_error', param: 'tool_choice', message: expect.stringContaining('web_search') },
    });
  });

  it.each(MODELS)('the OpenAI SDK gets a namespaced call back whole, non-streamed, on %s', async (model) => {
    const client: OpenAI = stack.openai;
    const reply = await client.responses.create({
      model,
      input: 'sim:call:crm__find {"query":"acme"}',
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
      reasoning: { effort: 'low', summary: 'auto' },
      parallel_tool_calls: true,
      tools: [
        {
          type: 'namespace',
          name: 'crm',
          description: 'CRM',
          tools: [
            {
              type: 'function',
              name: 'find',
              parameters: { type: 'object', properties: { query: { type: 'string' } } },
            },
          ],
        },
        { type: 'web_search' },
      ],
    } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(reply.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        name: 'find',
        namespace: 'crm',
        arguments: '{"query":"acme"}',
        status: 'completed',
      }),
    ]);
  });
});
