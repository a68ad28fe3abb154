import type { ServerResponse } from 'node:http';
import { callerDialect } from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import type { BodySink, UpstreamCall } from '../upstream/client';
import { CallResponse } from './call-response';
import type { CallerCall } from './plan';
import { frameSource, type FrameSource } from './stream-frames';
import { StreamRelay } from './stream-relay';

/** A seeded generator, so a failure names a case that can be run again. */
function random(seed: number) {
  let state = seed;
  return (below: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return Math.floor((state / 2147483648) * below);
  };
}

// Text that exercises the byte relay's edges: escapes, \u escapes it leaves to the decoder, every UTF-8 length.
const ATOMS = ['a', ' word', '"', '\\', '\n', '\u0001', 'é', '中', '😀', '\u2028', '\ud800'];

const chatEvents = (texts: string[], padding: boolean) => [
  {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 7,
    model: 'up-model',
    choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
  },
  ...texts.map((content, i) => ({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 7,
    model: 'up-model',
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
    ...(padding ? { obfuscation: 'p'.repeat(i % 4) } : {}),
  })),
  {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 7,
    model: 'up-model',
    choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
  },
  {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 7,
    model: 'up-model',
    choices: [],
    usage: { prompt_tokens: 5, completion_tokens: texts.length, total_tokens: 5 + texts.length },
  },
];
const chatWire = (texts: string[], padding: boolean) =>
  `${chatEvents(texts, padding)
    .map((event) => `data: ${JSON.stringify(event)}\n\n`)
    .join('')}data: [DONE]\n\n`;

const messagesWire = (texts: string[]) =>
  [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'up-model',
          content: [],
          usage: { input_tokens: 5, output_tokens: 1 },
        },
      },
    ],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
    ...texts.map((text) => [
      'content_block_delta',
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    ]),
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: texts.length },
      },
    ],
    ['message_stop', { type: 'message_stop' }],
  ]
    .map(([name, data]) => `event: ${name as string}\ndata: ${JSON.stringify(data)}\n\n`)
    .join('');

function callOf(dialect: 'chat' | 'messages', outputLimit?: number): CallerCall {
  const body = { model: 'caller-model', max_tokens: 100, messages: [{ role: 'user', content: 'hello there' }] };
  return {
    adapter: callerDialect(dialect),
    body,
    callerModel: 'caller-model',
    fallbacks: [],
    stream: true,
    includeUsage: true,
    outputLimit,
  };
}
const engineOf = (dialect: 'chat' | 'messages'): Engine => ({
  dialect: dialect === 'chat' ? 'openai' : 'anthropic',
  baseUrl: 'http://up.test',
  model: 'up-model',
  headers: {},
  label: 'up',
});

/**
 * Relays `chunks` through a StreamRelay on `source`; what the caller got (written, then the pending end) and the
 * accounting.
 */
async function relayed(call: CallerCall, source: FrameSource, chunks: Buffer[]) {
  const written: Buffer[] = [];
  const res = {
    destroyed: false,
    headersSent: true,
    flushHeaders: () => undefined,
    write: (data: string | Buffer) => written.push(Buffer.from(data)) > 0,
    once: () => res,
  };
  let sink: BodySink | undefined;
  let aborted = false;
  const reply = {
    attach: (to: BodySink) => (sink = to),
    pause: () => undefined,
    resume: () => undefined,
    abort: () => (aborted = true),
  } as unknown as UpstreamCall;
  const relay = new StreamRelay(
    call,
    source,
    new CallResponse(res as unknown as ServerResponse, call.adapter, 'req_1', 'https://gw.test'),
    { callerGone: false, attempts: 1 },
    performance.now(),
  );
  const done = relay.relay(reply, undefined);
  for (const chunk of chunks) {
    if (aborted) break;
    sink!.data(chunk);
  }
  if (!aborted) sink!.end();
  await done;
  return {
    bytes: Buffer.concat([...written, Buffer.from(relay.pending)]).toString('hex'),
    delivered: relay.delivered.text(),
    usage: relay.usage,
    ended: relay.ended,
    capped: relay.capped,
    failed: relay.failed,
    firstToken: relay.ttftMs > 0,
  };
}

/** The same stream through the decoder alone: the frame source with no byte template. */
const decoderOnly = (source: FrameSource): FrameSource => ({ ...source, textTemplate: () => undefined });

/** `wire` cut into chunks: at random places, at event boundaries, or several events to a chunk. */
function chunksOf(wire: Buffer, next: (below: number) => number): Buffer[] {
  const boundaries: number[] = [];
  for (let at = wire.indexOf('\n\n'); at >= 0; at = wire.indexOf('\n\n', at + 2)) boundaries.push(at + 2);
  const cuts = new Set<number>();
  for (const boundary of boundaries) if (next(3) > 0) cuts.add(boundary);
  for (let i = next(4); i > 0; i--) cuts.add(1 + next(wire.length - 1));
  const sorted = [0, ...[...cuts].filter((cut) => cut > 0 && cut < wire.length).sort((a, b) => a - b), wire.length];
  return sorted.slice(1).map((end, i) => wire.subarray(sorted[i], end));
}

describe('StreamRelay', () => {
  it.each(['chat', 'messages'] as const)(
    'relays a %s passthrough stream to the same bytes and accounting as the decoder alone, however it is cut',
    async (dialect) => {
      const next = random(dialect === 'chat' ? 5 : 6);
      for (let round = 0; round < 400; round++) {
        const texts = Array.from({ length: 1 + next(8) }, () =>
          Array.from({ length: next(4) }, () => ATOMS[next(ATOMS.length)]).join(''),
        );
        let wire = Buffer.from(dialect === 'chat' ? chatWire(texts, next(2) === 0) : messagesWire(texts));
        // Now and then a byte that is not UTF-8 inside the text (the decoder replaces it).
        if (next(8) === 0) {
          const at = wire.indexOf(dialect === 'chat' ? '"content":"' : '"text":"', wire.length / 2);
          if (at >= 0) wire = Buffer.concat([wire.subarray(0, at + 11), Buffer.from([0xff]), wire.subarray(at + 11)]);
        }
        const chunks = chunksOf(wire, next);
        const call = callOf(dialect, next(3) === 0 ? 1 + next(6) : undefined);
        const viaBytes = await relayed(call, frameSource(call, engineOf(dialect), 'req_1'), chunks);
        const viaDecoder = await relayed(call, decoderOnly(frameSource(call, engineOf(dialect), 'req_1')), chunks);
        expect({ round, ...viaBytes }).toEqual({ round, ...viaDecoder });
      }
    },
  );

  it('relays templated text deltas from the bytes, not the decoder', async () => {
    const call = callOf('chat');
    const source = frameSource(call, engineOf('chat'), 'req_1');
    let pushed = 0;
    const counting: FrameSource = { ...source, push: (event) => (pushed++, source.push(event)) };
    // One event to a chunk, as upstreams write them.
    const chunks = chatWire(['one', ' two', ' three', ' four'], true)
      .split(/(?<=\n\n)/)
      .map((event) => Buffer.from(event));
    expect(chunks).toHaveLength(8);
    const result = await relayed(call, counting, chunks);
    expect(result.delivered).toBe('one two three four');
    // The role chunk and the first text chunk (which the template is cut from), then the finish, the usage
    // and [DONE]: the other three text chunks never reached the frame source.
    expect(pushed).toBe(5);
  });
});
