// The edge's per-token relay work alone, for bench/relay.mjs: the real StreamRelay and frame source of many
// open chat streams (a passthrough whose caller names another model than the upstream, so each token is read
// through its template and rewritten), fed one token each in turn, as thousands of slow streams are. The
// caller's socket is a stand-in that takes every write whole: what is measured is the JavaScript a token
// costs the edge, with each stream's state as cold in the CPU's caches as it is under load, not the system
// call that sends it.
//
//   node dist/bench/relay-harness.cjs   HARNESS_STREAMS (10000), HARNESS_TOKENS (30), HARNESS_FEED_ONLY=1 (only
//                                       the loop that hands out the tokens, to subtract)
// Prints one JSON line: CPU ns per token.
import { StreamRelay } from '../../apps/gateway/src/model-calls/stream-relay';
import { frameSource } from '../../apps/gateway/src/model-calls/stream-frames';
import type { CallerCall } from '../../apps/gateway/src/model-calls/plan';
import type { CallResponse } from '../../apps/gateway/src/model-calls/call-response';
import type { UpstreamCall } from '../../apps/gateway/src/upstream/client';
import type { Engine } from '../../apps/gateway/src/routing/engines';

const STREAMS = Number(process.env.HARNESS_STREAMS ?? 10_000);
const TOKENS = Number(process.env.HARNESS_TOKENS ?? 30);
const feedOnly = process.env.HARNESS_FEED_ONLY === '1';
/**
 * Distinct token chunks per stream, made before the clock starts (an upstream's chunk is a fresh buffer, just written).
 */
const TOKEN_VARIANTS = 10;

let bytesWritten = 0;
const engine: Engine = {
  dialect: 'openai',
  baseUrl: 'https://upstream.invalid',
  model: 'upstream-model',
  headers: {},
  label: 'bench',
};

function openStream(index: number) {
  const socket = {
    destroyed: false,
    writable: true,
    writableLength: 0,
    write: (bytes: Buffer) => ((bytesWritten += bytes.length), true),
    once() {},
    off() {},
  };
  const res = {
    chunkedEncoding: true,
    socket,
    destroyed: false,
    headersSent: true,
    write: (bytes: Buffer) => ((bytesWritten += bytes.length), true),
  };
  const out = { res, requestId: `req_${index}`, flushHeaders() {} } as unknown as CallResponse;
  const call: CallerCall = {
    dialect: 'chat',
    body: {},
    callerModel: 'caller-model',
    stream: true,
    includeUsage: false,
    outputLimit: 4_096,
  };
  const relay = new StreamRelay(
    call,
    frameSource(call, true, engine, out.requestId),
    out,
    { callerGone: false },
    performance.now(),
  );
  // Chunks as OpenAI writes them (and the bundled simulator): one object around each delta.
  const head = JSON.stringify({
    id: `chatcmpl-${String(index).padStart(24, '0')}`,
    object: 'chat.completion.chunk',
    created: 1_764_000_000,
    model: 'upstream-model',
    system_fingerprint: 'fp_bench',
    service_tier: 'default',
  });
  const event = (delta: object, finish: string | null) =>
    `data: ${head.slice(0, -1)},"choices":[{"index":0,"delta":${JSON.stringify(delta)},` +
    `"logprobs":null,"finish_reason":${JSON.stringify(finish)}}]}\n\n`;
  const first = Buffer.from(
    event({ role: 'assistant', content: '', refusal: null }, null) + event({ content: 'Hello' }, null),
  );
  const reply = {
    attach: (sink: StreamRelay) => sink.data(first),
    pause() {},
    resume() {},
    abort() {},
  } as unknown as UpstreamCall;
  void relay.relay(reply, undefined);
  const tokens = Array.from({ length: TOKEN_VARIANTS }, (_, k) => Buffer.from(event({ content: ` word${k}` }, null)));
  return { relay, tokens };
}

const streams = Array.from({ length: STREAMS }, (_, index) => openStream(index));
const before = process.cpuUsage();
for (let token = 0; token < TOKENS; token++) {
  for (const stream of streams) {
    const chunk = stream.tokens[token % TOKEN_VARIANTS]!;
    if (!feedOnly) stream.relay.data(chunk);
  }
}
const used = process.cpuUsage(before);
console.log(
  JSON.stringify({
    streams: STREAMS,
    tokens: TOKENS,
    feedOnly,
    cpuNsPerToken: Math.round(((used.user + used.system) * 1_000) / (STREAMS * TOKENS)),
    bytesWritten,
  }),
);
