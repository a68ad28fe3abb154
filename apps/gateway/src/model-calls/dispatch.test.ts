import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callerDialect, type CallerDialect } from '@sbc/dialects';
import { createEgressPolicy } from '@sbc/egress';
import { ApiError } from '@sbc/errors';
import { memoryDeploymentLimiter, memoryTargetHealth, type TargetHealth } from '@sbc/route-health';
import { rejectionOf } from '@sbc/testing';
import type { Engine } from '../routing/engines';
import type { RoutePolicy } from '../routing/target-picker';
import type { Target } from '../routing/targets';
import { BetaRefusals } from '../upstream/beta-refusals';
import { createUpstreamClient, isAbort, type UpstreamClient } from '../upstream/client';
import { dispatch, type AdmitTarget, type Dispatched, type InFlight } from './dispatch';
import type { CallerCall } from './plan';

const OPTIONS = {
  connectTimeoutMs: 1_000,
  headersTimeoutMs: 300,
  bodyTimeoutMs: 300,
  idleTimeoutMs: 5_000,
  connectionsPerOrigin: 4,
  queueLimit: 16,
};
const EGRESS = createEgressPolicy({ privateEgress: 'operators' });
const CHAT_REPLY = { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { content: 'hi' } }] };

type Answer = (res: ServerResponse) => void;
const ok: Answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(CHAT_REPLY));
const failWith =
  (status: number, headers: Record<string, string> = {}): Answer =>
  (res) =>
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify({ error: { message: `upstream says ${status}`, type: 'server_error' } }));
/** A 200 stream whose connection is cut before its first chunk. */
const cutBeforeFirstChunk: Answer = (res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
  setTimeout(() => res.socket?.destroy(), 20);
};

/** A loopback upstream answering by script (`always`, or `next` answers in turn), or holding every request open. */
async function startUpstream() {
  const held: ServerResponse[] = [];
  const script = { hold: false, always: ok, next: [] as Answer[], received: 0 };
  const server: Server = createServer((req, res) => {
    req.resume();
    script.received++;
    if (script.hold) held.push(res);
    else (script.next.shift() ?? script.always)(res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    script,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on: a refused connection. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

function targetAt(baseUrl: string, name: string, overrides: Partial<Target> = {}): Target {
  const engine: Engine = { dialect: 'openai', baseUrl, model: 'engine-model', headers: {}, label: name };
  const label = `provider:vendor/${name}`;
  return {
    engine,
    kind: 'provider',
    label,
    upstream: 'provider:vendor',
    healthKey: label,
    callerModel: 'm',
    ...overrides,
  };
}

function callIn(adapter: CallerDialect, stream = false): CallerCall {
  const body =
    adapter.name === 'messages'
      ? { model: 'caller-model', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }
      : { model: 'caller-model', messages: [{ role: 'user', content: 'hi' }] };
  return { adapter, body, callerModel: 'caller-model', fallbacks: [], stream, includeUsage: false };
}

const chat = (stream = false) => callIn(callerDialect('chat'), stream);
const admitAll: AdmitTarget = async () => undefined;

describe('dispatch', () => {
  const upstreams: Array<Awaited<ReturnType<typeof startUpstream>>> = [];
  let client: UpstreamClient;
  let health: TargetHealth;
  let policy: RoutePolicy;
  const attempts: string[] = [];
  const upstream = async () => {
    const started = await startUpstream();
    upstreams.push(started);
    return started;
  };
  const run = async (
    call: CallerCall,
    targets: Target[],
    inFlight: InFlight = { callerGone: false, attempts: 0 },
    admit = admitAll,
  ) => {
    const dispatched = await dispatch(
      call,
      targets,
      { upstream: client, defaultMaxTokens: 1_024, route: policy, betas: new BetaRefusals() },
      inFlight,
      {},
      admit,
    );
    // A reply's body is read so its connection goes back to the pool.
    if (dispatched.kind === 'reply') await dispatched.reply.text();
    return { dispatched, inFlight };
  };

  beforeEach(async () => {
    client = createUpstreamClient(OPTIONS, EGRESS);
    health = memoryTargetHealth();
    attempts.length = 0;
    policy = {
      health,
      limiter: memoryDeploymentLimiter(),
      maxAttempts: 4,
      firstByteDeadlineMs: 10_000,
      onAttempt: (target, outcome) => attempts.push(`${target.label} ${outcome}`),
    };
  });
  afterEach(async () => {
    await client.close();
    await health.close();
    await Promise.all(upstreams.splice(0).map((started) => started.close()));
  });

  describe('an upstream that gives no answer', () => {
    it('an unreachable lone target is retried once, then fails the call with 502 upstream_error', async () => {
      const { dispatched, inFlight } = await run(chat(), [targetAt(await closedPortUrl(), 'gone')]);
      expect(dispatched).toMatchObject({
        kind: 'failed',
        failure: { status: 502, code: 'upstream_error', message: 'The upstream could not be reached.' },
      });
      expect(inFlight).toMatchObject({ attempts: 2, target: { label: 'provider:vendor/gone' } });
      expect(attempts).toEqual(['provider:vendor/gone failed', 'provider:vendor/gone failed']);
    });

    it('an unreachable target falls back to the next, which answers', async () => {
      const next = targetAt((await upstream()).baseUrl, 'next');
      const { dispatched, inFlight } = await run(chat(), [targetAt(await closedPortUrl(), 'gone'), next]);
      expect(dispatched).toMatchObject({ kind: 'reply', target: next });
      expect(inFlight.attempts).toBe(2);
    });

    it('a target that does not answer in time fails the call with 504 upstream_timeout', async () => {
      const held = await upstream();
      held.script.hold = true;
      const { dispatched } = await run(chat(), [targetAt(held.baseUrl, 'slow')]);
      expect(dispatched).toMatchObject({
        kind: 'failed',
        failure: { status: 504, code: 'upstream_timeout', message: 'The upstream did not answer in time.' },
      });
    });

    it.each([
      ['chat', 503],
      ['messages', 529],
    ] as const)(
      "a full pool is an overload in the caller's dialect (%s: %i) with a retry-after, not held against the target",
      async (dialect, status) => {
        await client.close();
        client = createUpstreamClient({ ...OPTIONS, connectionsPerOrigin: 1, queueLimit: 0 }, EGRESS);
        const held = await upstream();
        held.script.hold = true;
        const target = targetAt(held.baseUrl, 'full');
        target.engine.dialect = dialect === 'messages' ? 'anthropic' : 'openai';
        const first = client.send({ engine: target.engine, path: '/chat/completions', body: '{}' });
        const { dispatched } = await run(callIn(callerDialect(dialect)), [target]);
        expect(dispatched).toMatchObject({
          kind: 'failed',
          failure: { status, code: 'overloaded_error' },
          headers: { 'retry-after': '1' },
        });
        expect(attempts).toEqual(['provider:vendor/full overloaded']);
        first.abort();
        await rejectionOf(first.head);
      },
    );

    it('a caller already gone is not sent upstream: dispatch rejects with the abort', async () => {
      const error = await rejectionOf(
        run(chat(), [targetAt((await upstream()).baseUrl, 'up')], { callerGone: true, attempts: 0 }),
      );
      expect(isAbort(error)).toBe(true);
    });
  });

  describe('retries and cooldowns', () => {
    it('100 calls over two targets, one answering 503: all served by the other, the failing one cooled', async () => {
      const failing = await upstream();
      failing.script.always = failWith(503);
      const healthy = await upstream();
      const targets = [targetAt(failing.baseUrl, 'failing'), targetAt(healthy.baseUrl, 'healthy')];
      for (let i = 0; i < 100; i++) {
        const { dispatched } = await run(chat(), i % 2 === 0 ? targets : [...targets].reverse());
        expect(dispatched).toMatchObject({ kind: 'reply', target: { label: 'provider:vendor/healthy' } });
      }
      // Three failures in a row cool it for 5 s; a machine slow enough to outlast that may send one more.
      expect(failing.script.received).toBeGreaterThanOrEqual(3);
      expect(failing.script.received).toBeLessThanOrEqual(4);
      expect(healthy.script.received).toBe(100);
      expect(health.coolingUntil('provider:vendor/failing')).toBeGreaterThan(Date.now());
      expect(health.coolingUntil('provider:vendor/healthy')).toBeUndefined();
    });

    it('a stream broken before its first chunk is retried on the next target', async () => {
      const broken = await upstream();
      broken.script.always = cutBeforeFirstChunk;
      const next = await upstream();
      next.script.always = (res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: [DONE]\n\n');
      const { dispatched, inFlight } = await run(chat(true), [
        targetAt(broken.baseUrl, 'broken'),
        targetAt(next.baseUrl, 'next'),
      ]);
      expect(dispatched).toMatchObject({ kind: 'reply', target: { label: 'provider:vendor/next' } });
      expect(inFlight.attempts).toBe(2);
      expect(attempts[0]).toBe('provider:vendor/broken failed');
    });

    it('a lone target answering 429 with retry-after: 1 is retried after that second', async () => {
      const limited = await upstream();
      limited.script.next = [failWith(429, { 'retry-after': '1' })];
      const startedAt = performance.now();
      const { dispatched, inFlight } = await run(chat(), [targetAt(limited.baseUrl, 'limited')]);
      expect(dispatched).toMatchObject({ kind: 'reply' });
      expect(inFlight.attempts).toBe(2);
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(990);
    });

    it('a lone target that answers 429 again after its retry-after gives that 429 as the answer', async () => {
      const limited = await upstream();
      limited.script.always = failWith(429, { 'retry-after': '1' });
      const { dispatched, inFlight } = await run(chat(), [targetAt(limited.baseUrl, 'limited')]);
      expect(dispatched).toMatchObject({ kind: 'failed', failure: { status: 429 } });
      expect(inFlight.attempts).toBe(2);
    });

    it('a lone target asking for more than 2 s is not waited for: its 429 is the answer', async () => {
      const limited = await upstream();
      limited.script.always = failWith(429, { 'retry-after': '30' });
      const { dispatched, inFlight } = await run(chat(), [targetAt(limited.baseUrl, 'limited')]);
      expect(dispatched).toMatchObject({ kind: 'failed', failure: { status: 429 } });
      expect(inFlight.attempts).toBe(1);
      expect(health.coolingUntil('provider:vendor/limited')).toBeGreaterThan(Date.now() + 20_000);
    });

    it('another 4xx is the answer: no retry, not held against the target', async () => {
      const refusing = await upstream();
      refusing.script.always = failWith(400);
      const other = await upstream();
      const { dispatched, inFlight } = await run(chat(), [
        targetAt(refusing.baseUrl, 'refusing'),
        targetAt(other.baseUrl, 'other'),
      ]);
      expect(dispatched).toMatchObject({ kind: 'failed', failure: { status: 400 } });
      expect(inFlight.attempts).toBe(1);
      expect(other.script.received).toBe(0);
      expect(attempts).toEqual(['provider:vendor/refusing refused']);
    });

    it('a call makes at most maxAttempts attempts', async () => {
      const failing = await upstream();
      failing.script.always = failWith(500);
      policy.maxAttempts = 2;
      const targets = ['a', 'b', 'c'].map((name) => targetAt(failing.baseUrl, name));
      const { dispatched, inFlight } = await run(chat(), targets);
      expect(dispatched).toMatchObject({ kind: 'failed', failure: { status: 500 }, exhausted: true });
      expect(inFlight.attempts).toBe(2);
      expect(failing.script.received).toBe(2);
    });

    it('a caller hanging up while the call waits to retry stops it at once, not held against the target', async () => {
      const limited = await upstream();
      limited.script.always = failWith(503, { 'retry-after': '2' });
      const inFlight: InFlight = { callerGone: false, attempts: 0 };
      const startedAt = performance.now();
      const running = run(chat(), [targetAt(limited.baseUrl, 'limited')], inFlight);
      // The first attempt has failed well before this; the call is waiting out its retry-after.
      setTimeout(() => {
        inFlight.callerGone = true;
        inFlight.wake?.();
      }, 500);
      expect(isAbort(await rejectionOf(running))).toBe(true);
      expect(performance.now() - startedAt).toBeLessThan(1_500);
      expect(limited.script.received).toBe(1);
    });

    it('every target cooling: one half-open call, to the one whose cooldown ends first', async () => {
      const first = await upstream();
      const second = await upstream();
      const targets = [targetAt(first.baseUrl, 'first'), targetAt(second.baseUrl, 'second')];
      health.record('provider:vendor/first', { ok: false, status: 429, retryAfterMs: 20_000 });
      health.record('provider:vendor/second', { ok: false, status: 429, retryAfterMs: 10_000 });
      const { dispatched } = await run(chat(), targets);
      expect(dispatched).toMatchObject({ kind: 'reply', target: { label: 'provider:vendor/second' } });
      expect(first.script.received).toBe(0);
    });

    it('every target cooling and its half-open call made: a cooldown ending within 2 s is waited out', async () => {
      const limited = await upstream();
      const target = targetAt(limited.baseUrl, 'limited');
      health.record(target.healthKey, { ok: false, status: 429, retryAfterMs: 600 });
      health.claimHalfOpen([target.healthKey])?.release();
      const startedAt = performance.now();
      const { dispatched } = await run(chat(), [target]);
      expect(dispatched).toMatchObject({ kind: 'reply' });
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(500);
    });

    it('every target cooling for longer is a 429 in the caller’s dialect, with when to come back', async () => {
      const limited = await upstream();
      const target = targetAt(limited.baseUrl, 'limited');
      health.record(target.healthKey, { ok: false, status: 429, retryAfterMs: 30_000 });
      health.claimHalfOpen([target.healthKey])?.release();
      const inFlight: InFlight = { callerGone: false, attempts: 0 };
      const refusal = await rejectionOf(run(callIn(callerDialect('messages')), [target], inFlight));
      expect(refusal).toBeInstanceOf(ApiError);
      expect(refusal).toMatchObject({ status: 429, code: 'upstream_cooling', headers: { 'retry-after': '30' } });
      expect(inFlight.attempts).toBe(0);
      expect(limited.script.received).toBe(0);
    });

    it('a deployment at its requests per minute is skipped, not waited on', async () => {
      const limited = await upstream();
      const other = await upstream();
      const targets = [targetAt(limited.baseUrl, 'limited', { limits: { rpm: 1 } }), targetAt(other.baseUrl, 'other')];
      const served = [];
      for (let i = 0; i < 3; i++) served.push((await run(chat(), targets)).dispatched);
      expect(served.map((d) => (d as Extract<Dispatched, { kind: 'reply' }>).target.label)).toEqual([
        'provider:vendor/limited',
        'provider:vendor/other',
        'provider:vendor/other',
      ]);
      expect(limited.script.received).toBe(1);
    });
  });

  describe('admission on each target', () => {
    const budgetRefusal = new ApiError('budget_exhausted', 'The balance is spent.', { extra: { budget: 'account' } });
    const refuseCredits: AdmitTarget = async (target) => {
      if (target.kind !== 'byo') throw budgetRefusal;
    };

    it('a credits target the budget cannot pay is skipped: the failure before it is the answer', async () => {
      const own = await upstream();
      own.script.always = failWith(503);
      const credits = await upstream();
      const targets = [
        targetAt(own.baseUrl, 'own', { kind: 'byo', label: 'byo:own', healthKey: 'byo:usr_1:own' }),
        targetAt(credits.baseUrl, 'credits'),
      ];
      const { dispatched, inFlight } = await run(chat(), targets, undefined, refuseCredits);
      expect(dispatched).toMatchObject({ kind: 'failed', failure: { status: 503 } });
      expect(credits.script.received).toBe(0);
      expect(inFlight.target?.label).toBe('byo:own');
    });

    it('when no target could be admitted, the budget refusal is the answer', async () => {
      const credits = await upstream();
      const error = await rejectionOf(run(chat(), [targetAt(credits.baseUrl, 'credits')], undefined, refuseCredits));
      expect(error).toBe(budgetRefusal);
      expect(credits.script.received).toBe(0);
    });
  });
});
