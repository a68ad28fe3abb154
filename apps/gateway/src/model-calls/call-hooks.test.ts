import type { ChatResponse, StreamEvent } from '@sbc/dialects';
import type { UpstreamClient } from '../upstream/client';
import {
  beforeTarget,
  EventChain,
  hookPartsIn,
  replyThroughHooks,
  watchedUpstream,
  type CallHook,
  type HookedCall,
  type HookPart,
} from './call-hooks';

const hooked = {} as HookedCall;
const reply = (text: string): ChatResponse => ({
  id: 'r',
  model: 'm',
  created: 1,
  content: [{ type: 'text', text }],
  stopReason: 'end_turn',
  usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
});
const textOf = (r: ChatResponse) => (r.content[0] as { text: string }).text;

describe('the hooks in play', () => {
  it('are none (not an empty list) when no hook takes part in the call', () => {
    const idle: CallHook = { partIn: () => undefined };
    expect(hookPartsIn([idle, idle], hooked)).toBeUndefined();
    expect(hookPartsIn([], hooked)).toBeUndefined();
  });

  it('keep the hooks’ order', () => {
    const first: HookPart = {};
    const second: HookPart = {};
    const parts = hookPartsIn([{ partIn: () => first }, { partIn: () => undefined }, { partIn: () => second }], hooked);
    expect(parts).toEqual([first, second]);
    expect(parts![0]).toBe(first);
  });
});

describe('before the first target', () => {
  it('runs the parts in order; an answer ends the walk and drops the answering part and those after it', async () => {
    const seen: string[] = [];
    const answer = { reply: reply('kept'), cacheHit: true };
    const parts: HookPart[] = [
      { before: () => void seen.push('a') },
      { before: async () => (seen.push('b'), answer) },
      { before: () => void seen.push('c') },
    ];
    expect(await beforeTarget(parts, hooked)).toBe(answer);
    expect(seen).toEqual(['a', 'b']);
    expect(parts).toHaveLength(1);
  });

  it('a refusal thrown by a part is the call’s', async () => {
    const refusal = new Error('refused');
    await expect(beforeTarget([{ before: () => Promise.reject(refusal) }], hooked)).rejects.toBe(refusal);
  });
});

describe('after the reply', () => {
  it('the reply hooks run last part first, each seeing what the one before it returned', async () => {
    const order: string[] = [];
    const parts: HookPart[] = [
      { reply: (r) => (order.push(`outer:${textOf(r)}`), reply(`${textOf(r)}+outer`)) },
      { reply: (r) => void order.push(`watch:${textOf(r)}`) },
      { reply: async (r) => (order.push(`inner:${textOf(r)}`), reply(`${textOf(r)}+inner`)) },
    ];
    expect(textOf(await replyThroughHooks(parts, reply('up')))).toBe('up+inner+outer');
    expect(order).toEqual(['inner:up', 'watch:up+inner', 'outer:up+inner']);
  });
});

describe('a stream’s event chain', () => {
  const text = (t: string): StreamEvent => ({ type: 'text', text: t });

  it('is none when no part filters streams', () => {
    expect(EventChain.of([{}, { reply: () => undefined }])).toBeUndefined();
  });

  it('passes events through the filters last part first; a filter may hold back and release them', () => {
    const seenByOuter: StreamEvent[] = [];
    let held: StreamEvent[] = [];
    const holdUntilStop: HookPart = {
      stream: () => ({
        rewrites: true,
        push(event) {
          if (event.type === 'text') {
            held.push(event);
            return [];
          }
          const release = [...held, event];
          held = [];
          return release;
        },
      }),
    };
    const watcher: HookPart = { stream: () => ({ rewrites: false, push: (event) => void seenByOuter.push(event) }) };
    const chain = EventChain.of([watcher, holdUntilStop])!;
    expect(chain.rewrites).toBe(true);
    expect(chain.push(text('a'))).toEqual([]);
    expect(chain.push(text('b'))).toEqual([]);
    expect(chain.push({ type: 'stop', reason: 'end_turn' })).toEqual([text('a'), text('b'), expect.anything()]);
    expect(seenByOuter.map((event) => event.type)).toEqual(['text', 'text', 'stop']);
  });

  it('an error event a filter passes on halts the chain: nothing after it goes on', () => {
    const failure = { status: 400, message: 'blocked', code: 'guardrail_blocked' };
    const blocker: HookPart = {
      stream: () => ({
        rewrites: true,
        push: (event) =>
          event.type === 'text' && event.text === 'bad' ? [{ type: 'error', error: failure }] : undefined,
      }),
    };
    const chain = EventChain.of([blocker])!;
    expect(chain.push(text('ok'))).toEqual([text('ok')]);
    expect(chain.push(text('bad'))).toEqual([{ type: 'error', error: failure }]);
    expect(chain.halted).toEqual(failure);
    expect(chain.push(text('more'))).toEqual([]);
  });
});

describe('watched attempts', () => {
  const upstream = { send: jest.fn(() => ({ marker: true })) } as unknown as UpstreamClient;

  it('leave the client as it is when no part watches attempts', () => {
    expect(watchedUpstream(upstream, undefined)).toBe(upstream);
    expect(watchedUpstream(upstream, [{}])).toBe(upstream);
  });

  it('show each part every request as sent and its reply', () => {
    const attempt = jest.fn();
    const watched = watchedUpstream(upstream, [{ attempt }]);
    const request = { path: '/chat/completions' } as Parameters<UpstreamClient['send']>[0];
    const sent = watched.send(request);
    expect(attempt).toHaveBeenCalledWith(request, sent);
  });
});
