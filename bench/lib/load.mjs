// Closed-loop load generator for bench/gateway.mjs: `concurrency` workers, each sending its next request as
// soon as the previous one's body is fully read, over one undici Pool per target (one connection per worker,
// no pipelining). Every response is checked; failures are counted, never timed.
import { Pool } from 'undici';

/** One pool per target and concurrency, kept across the alternating rounds so connections stay warm. */
export function openPool(origin, concurrency) {
  return new Pool(origin, {
    connections: concurrency,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 600_000,
  });
}

/**
 * What a good answer looks like, per dialect:
 * - `token`: a frame carrying generated text (the TTFT mark). Chat's first frame is the role frame with
 *   `"content":""`, which is not a token; the regex needs a non-empty content string.
 * - `terminator`: the end-of-stream marker; `body`: a substring every non-streaming answer has.
 */
const DIALECTS = {
  chat: { token: /"content":"(?!")/, terminator: 'data: [DONE]', body: '"choices"' },
  messages: { token: /"type":"text_delta"/, terminator: 'message_stop', body: '"type":"message"' },
};

const countMatches = (regex, text) => text.match(new RegExp(regex.source, 'g'))?.length ?? 0;

/**
 * Sends `requests` requests of `spec` ({ path, headers, body, stream, dialect, tokens }) through `pool`.
 * Per request: `total` = start → body fully read; `ttft` = start → first body chunk holding a generated
 * token (streaming) or the first body byte (non-streaming). Returns the raw samples so rounds can be merged.
 */
export async function runLoad(pool, spec, requests, concurrency) {
  const { token, terminator, body: bodyMark } = DIALECTS[spec.dialect];
  const total = [];
  const ttft = [];
  const errors = new Map(); // message → count
  // Ids differ per answer; masking them lets identical failures be counted together.
  const fail = (raw) => {
    const message = raw.replace(/\b(req|msg|chatcmpl|resp|call|toolu)_[A-Za-z0-9]+/g, '$1_…');
    errors.set(message, (errors.get(message) ?? 0) + 1);
  };
  let issued = 0;

  async function one() {
    const t0 = performance.now();
    let res;
    try {
      res = await pool.request({ method: 'POST', path: spec.path, headers: spec.headers, body: spec.body });
    } catch (error) {
      return fail(`request failed: ${error.code ?? ''} ${error.message}`);
    }
    let text = '';
    let first;
    try {
      res.body.setEncoding('utf8');
      for await (const chunk of res.body) {
        const from = Math.max(0, text.length - 32); // a marker may straddle two chunks
        text += chunk;
        if (first === undefined && (!spec.stream || token.test(text.slice(from)))) first = performance.now() - t0;
      }
    } catch (error) {
      return fail(`body aborted: ${error.code ?? ''} ${error.message}`);
    }
    const elapsed = performance.now() - t0;
    if (res.statusCode !== 200) return fail(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
    if (spec.stream) {
      if (!text.includes(terminator)) return fail(`stream ended without ${terminator}: …${text.slice(-200)}`);
      const tokens = countMatches(token, text);
      if (tokens !== spec.tokens) return fail(`stream carried ${tokens} content deltas, expected ${spec.tokens}`);
    } else if (!text.includes(bodyMark)) {
      return fail(`unexpected body: ${text.slice(0, 300)}`);
    }
    total.push(elapsed);
    ttft.push(first ?? elapsed);
  }

  async function worker() {
    while (issued < requests) {
      issued += 1;
      await one();
    }
  }

  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, requests) }, worker));
  return { seconds: (performance.now() - started) / 1000, total, ttft, errors };
}

/** Nearest-rank percentile of an ascending array, in ms rounded to µs; null when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const value = sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
  return Math.round(value * 1000) / 1000;
}
