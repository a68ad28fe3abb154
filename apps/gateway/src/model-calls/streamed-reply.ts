import type { Target } from '../routing/targets';
import type { UpstreamCall } from '../upstream/client';
import { EventChain, hooksDone, sentWatchersOf } from './call-hooks';
import type { CallOutcome } from './call-outcome';
import { servedOutcome, type Exchange, type ExchangeState } from './exchange-call';
import { hookedFrameSource } from './hooked-stream';
import { frameSource, usageOfAbandoned } from './stream-frames';
import { StreamRelay } from './stream-relay';

/**
 * Relays the upstream's stream to the caller in its dialect, through the call's stream filters when it has any.
 * Resolves once the stream ended and the call's usage is durable (its last bytes go out after that); rejects when
 * the caller hung up, with the relay in `state` for billing what was delivered.
 */
export async function relayStream(
  x: Exchange,
  dispatched: { target: Target; reply: UpstreamCall },
  state: ExchangeState,
  drainDeadline: AbortSignal | undefined,
): Promise<CallOutcome> {
  const { call, out } = x;
  const engine = dispatched.target.engine;
  const hooked =
    x.hooks && hookedFrameSource(call, engine, out.requestId, EventChain.of(x.hooks), sentWatchersOf(x.hooks));
  const source = hooked || frameSource(call, engine, out.requestId);
  const relay = new StreamRelay(call, source, out, state, x.startedAt);
  state.relay = relay;
  out.openStream();
  await relay.relay(dispatched.reply, drainDeadline);
  // An upstream error event was already rendered by the source; a stream that merely stopped needs one.
  if (!relay.ended && !relay.failed && !relay.capped)
    relay.fail({ status: 502, message: 'The upstream closed the stream before it finished.' });
  // A stream the edge ended is billed like one the caller abandoned: for what was delivered.
  const usage = relay.drained ? usageOfAbandoned(call, relay.usage, relay.delivered) : relay.usage;
  const outcome = servedOutcome(
    state,
    relay.failed ? relay.failed.status : 200,
    usage,
    relay.ttftMs,
    relay.capped ? 'max_tokens' : relay.stopReason,
    () => [{ type: 'text', text: relay.delivered.text() }],
  );
  if (hooked) outcome.responseId = hooked.responseId;
  await x.beforeEnd(outcome);
  out.res.end(relay.pending);
  hooksDone(x.hooks, outcome);
  return outcome;
}
