import type { RunningGateway } from '@sbc/app-gateway';
import { anthropicFor, openAiFor, OWNER_KEY, simHouse, startStack, type AccountSurfaceStack } from '../support/stack';

/** A chat call as bench/gateway.mjs sends it, raw, so the status and headers are the edge's own. */
function chatCall(edgeUrl: string, content: string, key = OWNER_KEY): Promise<Response> {
  return fetch(`${edgeUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'house', max_tokens: 16, messages: [{ role: 'user', content }] }),
  });
}

// The switch behind bench:gateway's step table (apps/gateway/src/bench-steps.ts): an edge without the named steps,
// beside the stack's full edge on the same account service and sim.
describe('an edge started with SBC_BENCH_STEPS_OFF (benchmarks only)', () => {
  let stack: AccountSurfaceStack;
  let stepsOff: RunningGateway;
  beforeAll(async () => {
    stack = await startStack({ label: 'bench_steps', house: simHouse });
    stepsOff = await stack.startEdge(simHouse(stack.sim.url), {
      USAGE_EVENTS: 'off',
      SBC_BENCH_STEPS_OFF: 'metrics,record,admit,scans',
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers in both dialects, and only keys the account service knows', async () => {
    const chat = await openAiFor(stepsOff.url).chat.completions.create({
      model: 'house',
      messages: [{ role: 'user', content: 'sim-tokens:3' }],
    });
    expect(chat.choices[0]?.message.content).toBeTruthy();
    const message = await anthropicFor(stepsOff.url).messages.create({
      model: 'house-omni',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'sim-tokens:3' }],
    });
    expect(message.content[0]?.type).toBe('text');
    // A second key is looked up for real, and so is the first one again after it.
    const other = await stack.seedKey();
    expect((await chatCall(stepsOff.url, 'second key', other.secret)).status).toBe(200);
    expect((await chatCall(stepsOff.url, 'first key again')).status).toBe(200);
    const unknown = await chatCall(stepsOff.url, 'who?', `sbc_${'u'.repeat(32)}`);
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });

  it('leaves out what it names: the request bucket, the hostile-input scans and the request metrics', async () => {
    // A NUL spelt as an escape: the full edge's scan refuses it, and its answer carries the bucket's headers.
    const full = await chatCall(stack.edge.url, 'a NUL \u0000 in the prompt');
    expect(full.status).toBe(400);
    expect(full.headers.get('x-ratelimit-remaining')).not.toBeNull();
    const bare = await chatCall(stepsOff.url, 'a NUL \u0000 in the prompt');
    expect(bare.status).toBe(200);
    expect(bare.headers.get('x-ratelimit-remaining')).toBeNull();
    const scrape = await (await fetch(`${stepsOff.url}/metrics`)).text();
    expect(scrape).toContain('# TYPE sbc_http_requests_total counter');
    expect(scrape).not.toMatch(/^sbc_http_requests_total\{/m);
    expect(scrape).not.toMatch(/^sbc_model_calls_total\{/m);
  });
});
