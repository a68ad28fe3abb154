import { randomUUID } from 'node:crypto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { UsageEvent, UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';

/** A request id a test can find its usage row by. */
export const requestId = (tag: string) => `req_${tag}_${randomUUID().replace(/-/g, '')}`;

export type UsageEventInit = MessageInitShape<typeof UsageEventSchema>;
/** Fields of a usage event, every one optional; `usageEvent` fills in a plausible house call. */
export type UsageEventFields = Partial<Omit<UsageEvent, '$typeName' | '$unknown' | 'ts'>>;

export function usageEvent(init: UsageEventFields & { atMs: number }): UsageEventInit {
  const { atMs, ...rest } = init;
  return {
    model: 'house',
    upstream: 'house',
    provider: 'sim-upstream (bundled simulator)',
    dialectIn: 'chat',
    dialectOut: 'openai',
    route: 'auto',
    status: 200,
    inputTokens: 100n,
    outputTokens: 50n,
    listCostNanoUsd: 60_000n,
    creditsChargedMicrocredits: 60_000n,
    latencyMs: 12n,
    ttftMs: 3n,
    ts: timestampFromMs(atMs),
    ...rest,
  };
}
