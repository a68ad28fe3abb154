import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callerDialect } from '@sbc/dialects';
import { createEgressPolicy } from '@sbc/egress';
import { memoryDeploymentLimiter, memoryTargetHealth, type TargetHealth } from '@sbc/route-health';
import type { Engine } from '../routing/engines';
import type { RoutePolicy } from '../routing/target-picker';
import type { Target } from '../routing/targets';
import { BetaRefusals, type BetaRefusalObserver } from '../upstream/beta-refusals';
import { createUpstreamClient, type UpstreamClient } from '../upstream/client';
import { dispatch, type InFlight } from './dispatch';
import type { CallerCall } from './plan';

const OPTIONS = {
  connectTimeoutMs: 1_000,
  headersTimeoutMs: 1_000,
  bodyTimeoutMs: 1_000,
  idleTimeoutMs: 5_000,
  connectionsPerOrigin: 4,
  queueLimit: 16,
};
const MESSAGE = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'm',
  content: [{ type: 'text', text: 'hi' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 3, output_tokens: 1 },
};
const KNOWN = new Set(['interleaved-thinking-2025-05-14']);

/**
 * An Anthropic-dialect upstream that takes only KNOWN betas, refusing others as Vertex does (naming them) or as
 * Bedrock does (`unnamed`); every request's headers are kept.
 */
async function startStrictUpstream(unnamed = false) {
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    seen.push(req.headers);
    const values = String(req.headers['anthropic-beta'] ?? '')
      .split(',')
      .filter(Boolean);
    const unknown = values.filter((value) => !KNOWN.has(value));
    res.setHeader('content-type', 'application/json');
    if (unknown.length === 0) return res.end(JSON.stringify(MESSAGE));
    const message = unnamed
      ? 'invalid beta flag'
      : `Unexpected value(s) ${unknown.map((value) => `\`${value}\``).join(', ')} for the \`anthropic-beta\` header.`;
    res.writeHead(400).end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { baseUrl, seen, close };
}

function target(baseUrl: string, engine: Partial<Engine> = {}): Target {
  return {
    engine: { dialect: 'anthropic', baseUrl, model: 'm', headers: {}, label: 'strict', ...engine },
    kind: 'provider',
    label: 'provider:anthropic/strict',
    upstream: 'provider:anthropic',
    healthKey: `provider:anthropic/strict|${baseUrl}`,
    callerModel: 'm',
  };
}

const call = (): CallerCall => {
  const adapter = callerDialect('messages');
  const body = { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
  // Parsed as for a target of the other dialect, which some tests have.
  return {
    adapter,
    body,
    request: adapter.parse(body),
    callerModel: 'm',
    fallbacks: [],
    stream: false,
    includeUsage: false,
  };
};

const CLAUDE_CODE_BETAS = 'claude-code-20250219,interleaved-thinking-2025-05-14,mid-conversation-system-2026-04-07';

describe('dispatch with anthropic-beta', () => {
  let client: UpstreamClient;
  let health: TargetHealth;
  let policy: RoutePolicy;
  let attempts: string[];
  let heard: Array<{ kind: string; values?: readonly string[]; count?: number; resent?: boolean }>;
  let betas: BetaRefusals;
  let upstream: Awaited<ReturnType<typeof startStrictUpstream>>;

  const observer: BetaRefusalObserver = {
    refused: (_target, values, _requestId, resent) => heard.push({ kind: 'refused', values, resent }),
    leftOut: (_target, count) => heard.push({ kind: 'left_out', count }),
  };
  const run = async (targets: Target[], betaHeader: string | undefined, maxAttempts = 4) => {
    const inFlight: InFlight = { callerGone: false, attempts: 0, requestId: 'req_1' };
    const passHeaders: Record<string, string> = betaHeader === undefined ? {} : { 'anthropic-beta': betaHeader };
    const dispatched = await dispatch(
      call(),
      targets,
      { upstream: client, defaultMaxTokens: 1_024, route: { ...policy, maxAttempts }, betas },
      inFlight,
      passHeaders,
      async () => undefined,
    );
    if (dispatched.kind === 'reply') await dispatched.reply.text();
    return { dispatched, inFlight };
  };

  beforeEach(() => {
    client = createUpstreamClient(OPTIONS, createEgressPolicy({ privateEgress: 'operators' }));
    health = memoryTargetHealth();
    attempts = [];
    heard = [];
    betas = new BetaRefusals(observer);
    policy = {
      health,
      limiter: memoryDeploymentLimiter(),
      maxAttempts: 4,
      firstByteDeadlineMs: 10_000,
      onAttempt: (_target, outcome, status) => attempts.push(`${outcome}${status ? ` ${status}` : ''}`),
    };
  });
  afterEach(async () => {
    await client.close();
    await health.close();
    await upstream?.close();
  });

  it('a 400 naming refused values is re-sent once without them: a second attempt, never a cooldown', async () => {
    upstream = await startStrictUpstream();
    const { dispatched, inFlight } = await run([target(upstream.baseUrl)], CLAUDE_CODE_BETAS);
    expect(dispatched.kind).toBe('reply');
    expect(inFlight.attempts).toBe(2);
    expect(attempts).toEqual(['refused 400', 'ok']);
    expect(upstream.seen.map((headers) => headers['anthropic-beta'])).toEqual([
      CLAUDE_CODE_BETAS,
      'interleaved-thinking-2025-05-14',
    ]);
    expect(heard).toEqual([
      { kind: 'refused', values: ['claude-code-20250219', 'mid-conversation-system-2026-04-07'], resent: true },
    ]);
    expect(health.coolingUntil(target(upstream.baseUrl).healthKey, Date.now())).toBeUndefined();
  });

  it('the next call leaves the refused values out up front: one request, no retry', async () => {
    upstream = await startStrictUpstream();
    await run([target(upstream.baseUrl)], CLAUDE_CODE_BETAS);
    upstream.seen.length = 0;
    heard = [];
    const { inFlight } = await run([target(upstream.baseUrl)], CLAUDE_CODE_BETAS);
    expect(inFlight.attempts).toBe(1);
    expect(upstream.seen.map((headers) => headers['anthropic-beta'])).toEqual(['interleaved-thinking-2025-05-14']);
    expect(heard).toEqual([{ kind: 'left_out', count: 2 }]);
  });

  it('a refusal that names no value (Bedrock) is re-sent with no beta header at all', async () => {
    upstream = await startStrictUpstream(true);
    const { dispatched } = await run([target(upstream.baseUrl)], CLAUDE_CODE_BETAS);
    expect(dispatched.kind).toBe('reply');
    expect(upstream.seen.map((headers) => headers['anthropic-beta'])).toEqual([CLAUDE_CODE_BETAS, undefined]);
  });

  it('with no attempt left the 400 is the answer, and the refusal is still remembered', async () => {
    upstream = await startStrictUpstream();
    const { dispatched } = await run([target(upstream.baseUrl)], CLAUDE_CODE_BETAS, 1);
    expect(dispatched).toMatchObject({ kind: 'failed', failure: { status: 400 } });
    expect(upstream.seen).toHaveLength(1);
    expect(heard).toEqual([expect.objectContaining({ kind: 'refused', resent: false })]);
  });

  it("applies the endpoint's drop and map before sending, and sends no header when nothing is left", async () => {
    upstream = await startStrictUpstream();
    const mapped = target(upstream.baseUrl, {
      anthropicBeta: { drop: ['claude-code-20250219'], map: { 'x-thinking': 'interleaved-thinking-2025-05-14' } },
    });
    await run([mapped], 'claude-code-20250219,x-thinking');
    const dropAll = target(upstream.baseUrl, { anthropicBeta: { drop: ['*'] } });
    await run([dropAll], CLAUDE_CODE_BETAS);
    expect(upstream.seen.map((headers) => headers['anthropic-beta'])).toEqual([
      'interleaved-thinking-2025-05-14',
      undefined,
    ]);
    expect(heard).toEqual([]);
  });

  it('a call without the header, or to an OpenAI-dialect target, sends no beta header and learns nothing', async () => {
    upstream = await startStrictUpstream();
    await run([target(upstream.baseUrl)], undefined);
    expect(upstream.seen[0]!['anthropic-beta']).toBeUndefined();
    const openai = target(upstream.baseUrl, { dialect: 'openai' });
    await run([openai], CLAUDE_CODE_BETAS);
    expect(upstream.seen[1]!['anthropic-beta']).toBeUndefined();
    expect(heard).toEqual([]);
  });
});
