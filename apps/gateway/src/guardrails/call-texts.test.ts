import fc from 'fast-check';
import { callerDialect, type ChatResponse, type Dialect } from '@sbc/dialects';
import { mapReplyTexts, mapRequestTexts, textsOf } from './call-texts';

// Every text field of each dialect's record reaches the guardrails: a body is generated with a marker in every
// field a person or a tool writes text in, parsed by the dialect as the edge parses it, and every marker must be
// among the texts the guardrails walk (and be gone once they map each text).

let next = 0;
const marker = () => `MARK${(next += 1)}X`;

/** A piece of text holding a fresh marker, with some words around it. */
const text = fc.tuple(fc.constantFrom('', 'hello ', 'a b c '), fc.constantFrom('', ' end', '!')).map(([a, b]) => {
  return `${a}${marker()}${b}`;
});

function chatBody(texts: string[]) {
  const t = () => texts.shift() ?? 'x';
  return {
    model: 'm',
    messages: [
      { role: 'system', content: t() },
      { role: 'user', content: [{ type: 'text', text: t() }] },
      {
        role: 'assistant',
        content: t(),
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'f', arguments: JSON.stringify({ q: t() }) } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: t() },
      { role: 'developer', content: t() },
      { role: 'user', content: t() },
    ],
  };
}

function responsesBody(texts: string[]) {
  const t = () => texts.shift() ?? 'x';
  return {
    model: 'm',
    instructions: t(),
    input: [
      { role: 'user', content: [{ type: 'input_text', text: t() }] },
      { type: 'function_call', call_id: 'call_1', name: 'f', arguments: JSON.stringify({ q: t() }) },
      { type: 'function_call_output', call_id: 'call_1', output: t() },
      { role: 'developer', content: t() },
      { role: 'assistant', content: [{ type: 'output_text', text: t() }] },
      { role: 'user', content: t() },
    ],
  };
}

function messagesBody(texts: string[]) {
  const t = () => texts.shift() ?? 'x';
  return {
    model: 'm',
    max_tokens: 10,
    system: [{ type: 'text', text: t() }],
    messages: [
      { role: 'user', content: t() },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: t() },
          { type: 'tool_use', id: 'toolu_1', name: 'f', input: { q: t() } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: t() }] },
          { type: 'text', text: t() },
        ],
      },
    ],
  };
}

const BODIES: Record<Exclude<Dialect, 'embeddings'>, (texts: string[]) => Record<string, unknown>> = {
  chat: chatBody,
  responses: responsesBody,
  messages: messagesBody,
};

describe.each(Object.keys(BODIES) as Array<keyof typeof BODIES>)('every text of a %s request', (dialect) => {
  it('is walked, and mapped', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 8, maxLength: 8 }), (texts) => {
        const markers = texts.map((one) => /MARK\d+X/.exec(one)![0]);
        const request = callerDialect(dialect).parse(BODIES[dialect]([...texts]));
        const walked = textsOf((map) => mapRequestTexts(request, map)).join('\n');
        const used = markers.filter((one) => JSON.stringify(BODIES[dialect]([...texts])).includes(one));
        for (const one of used) expect(walked).toContain(one);
        const mapped = mapRequestTexts(request, (each) => each.replace(/MARK\d+X/g, '[gone]'));
        expect(JSON.stringify(mapped)).not.toMatch(/MARK\d+X/);
      }),
      { numRuns: 30 },
    );
  });
});

describe('every text of a reply', () => {
  it('is walked and mapped: its text, refusal, reasoning and tool-call arguments', () => {
    const reply: ChatResponse = {
      id: 'r',
      model: 'm',
      created: 1,
      content: [
        { type: 'reasoning', text: marker() },
        { type: 'text', text: marker() },
        { type: 'refusal', text: marker() },
        { type: 'tool_call', id: 'c', name: 'f', arguments: JSON.stringify({ q: marker() }) },
      ],
      stopReason: 'end_turn',
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    };
    expect(
      textsOf((map) => mapReplyTexts(reply, map))
        .join('')
        .match(/MARK\d+X/g),
    ).toHaveLength(4);
    expect(JSON.stringify(mapReplyTexts(reply, (each) => each.replace(/MARK\d+X/g, '')))).not.toMatch(/MARK\d+X/);
  });
});
